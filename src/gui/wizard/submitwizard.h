#pragma once

// The submission wizard (docs/jobs.md, "The submission wizard"): five pages over one JobSpec,
// every rule taken from the core (Job::JobSpec's messages, the Capsule walk, the capacity
// model's fit verdict, the RayJob builder and the Submitter), so the wizard, `starforge-cli
// manifest` and `starforge-cli submit` judge and send the same thing.
//   1 Code       the folder as a tree, what the excludes drop, the job's name
//   2 Recipe     algorithm or script, config, overrides, image, env and secretEnv
//   3 Resources  pools with the live free GPUs per series and the fit verdict; storage, corpus
//   4 Review     the RayJob as JSON, the Capsule, the deadline and TTL
//   5 Submit     the Submitter's stages with progress; cancel cleans up
// A page's Next stays off while the JobSpec has a problem in that page's fields, with the
// core's message shown. A failed submit leaves every page as it was.

#include "core/job/capsule.h"
#include "core/job/jobspec.h"

#include <QWizard>

#include <functional>
#include <optional>

namespace Starforge {
class Session;
}

namespace Starforge::Gui {

class CodePage;
class RecipePage;
class ResourcesPage;
class ReviewPage;
class SubmitPage;

class SubmitWizard final : public QWizard
{
    Q_OBJECT
public:
    enum PageId { CodePageId, RecipePageId, ResourcesPageId, ReviewPageId, SubmitPageId };

    // session: the cluster to submit to and whose capacity the verdicts read (may be null, or
    // not connected: the pages say so). spec: what the pages start from.
    explicit SubmitWizard(Session *session, const Job::JobSpec &spec, QWidget *parent = nullptr);
    ~SubmitWizard() override;

    // A JobSpec for a code folder without one: named after the folder, the example recipe.
    static Job::JobSpec specForFolder(const QString &folder);
    // A path given on the command line, dropped or opened: a JobSpec file, or a folder (its
    // jobspec.json when it has one). The error says what is wrong with it.
    static Result<Job::JobSpec> specForPath(const QString &path);

    Session *session() const { return m_session; }
    // The JobSpec as the pages hold it now.
    Job::JobSpec spec() const;
    // The JobSpec the wizard was opened with (its file and folder).
    const Job::JobSpec &initialSpec() const { return m_initial; }
    // The job id the review shows and the submission uses (a retry keeps it).
    QString jobId() const { return m_jobId; }
    // The Capsule walk of the code page (nullopt until it is done or when it failed).
    const std::optional<Job::CapsuleListing> &listing() const;

    // The problems of spec() whose field starts with one of prefixes ("name", "recipe", ...).
    QStringList problemsOf(const QStringList &prefixes) const;

    // Dialogs the pages open, replaceable by tests: a folder to pack, a file to save to.
    std::function<QString(QWidget *parent, const QString &start)> chooseFolder;
    std::function<QString(QWidget *parent, const QString &start)> chooseSaveFile;

    void reject() override;

Q_SIGNALS:
    // The job was created; the wizard closes after this.
    void submitted(const QString &jobId);
    // Something the pages' inputs depend on changed (the listing, a field): pages re-check.
    void specChanged();

private:
    friend class CodePage;
    Session *m_session;
    Job::JobSpec m_initial;
    QString m_jobId;
    CodePage *m_code;
    RecipePage *m_recipe;
    ResourcesPage *m_resources;
    ReviewPage *m_review;
    SubmitPage *m_submit;
};

} // namespace Starforge::Gui
