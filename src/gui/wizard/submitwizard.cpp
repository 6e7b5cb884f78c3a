#include "gui/wizard/submitwizard.h"

#include "core/job/rayjobbuilder.h"
#include "gui/wizard/codepage.h"
#include "gui/wizard/recipepage.h"
#include "gui/wizard/resourcespage.h"
#include "gui/wizard/reviewpage.h"
#include "gui/wizard/submitpage.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QPushButton>
#include <QRegularExpression>

namespace Starforge::Gui {

Q_LOGGING_CATEGORY(lcWizard, "starforge.gui.wizard", QtInfoMsg)

SubmitWizard::SubmitWizard(Session *session, const Job::JobSpec &spec, QWidget *parent)
    : QWizard(parent)
    , m_session(session)
    , m_initial(spec)
    , m_jobId(Job::RayJobBuilder::newJobId())
{
    setObjectName(QStringLiteral("submitWizard"));
    setWindowTitle(tr("New Job — Starforge"));
    setAccessibleName(tr("Submit a training job"));
    setWizardStyle(QWizard::ClassicStyle);
    setOption(QWizard::NoBackButtonOnLastPage, false);
    setOption(QWizard::HaveHelpButton, false);
    resize(980, 700);
    chooseFolder = [](QWidget *owner, const QString &start) {
        return QFileDialog::getExistingDirectory(owner, tr("Code folder"), start);
    };
    chooseSaveFile = [](QWidget *owner, const QString &start) {
        return QFileDialog::getSaveFileName(owner, tr("Save JobSpec"), start, tr("JobSpec (*.json)"));
    };
    // Every page first, then their contents: a page's checks read the others' fields.
    m_code = new CodePage(this);
    m_recipe = new RecipePage(this);
    m_resources = new ResourcesPage(this);
    m_review = new ReviewPage(this);
    m_submit = new SubmitPage(this);
    setPage(CodePageId, m_code);
    setPage(RecipePageId, m_recipe);
    setPage(ResourcesPageId, m_resources);
    setPage(ReviewPageId, m_review);
    setPage(SubmitPageId, m_submit);
    m_code->setObjectName(QStringLiteral("codePage"));
    m_recipe->setObjectName(QStringLiteral("recipePage"));
    m_resources->setObjectName(QStringLiteral("resourcesPage"));
    m_review->setObjectName(QStringLiteral("reviewPage"));
    m_submit->setObjectName(QStringLiteral("submitPage"));
    m_recipe->load(spec);
    m_resources->load(spec);
    m_code->load(spec);
    for (QWizard::WizardButton which : {QWizard::BackButton, QWizard::NextButton, QWizard::CancelButton, QWizard::FinishButton}) {
        QAbstractButton *b = button(which);
        b->setAccessibleName(b->text().remove(u'&').remove(QStringLiteral(" >")).remove(QStringLiteral("< ")));
    }
    qCInfo(lcWizard).noquote() << "wizard opened for job" << (spec.name.isEmpty() ? QStringLiteral("(unnamed)") : spec.name) << "from"
                               << (spec.sourcePath.isEmpty() ? spec.codePath() : spec.sourcePath);
}

SubmitWizard::~SubmitWizard() = default;

Job::JobSpec SubmitWizard::specForFolder(const QString &folder)
{
    Job::JobSpec spec;
    spec.sourceDir = QFileInfo(folder).absoluteFilePath();
    spec.code = QStringLiteral(".");
    // The folder's name, made a valid job name where it can be.
    QString name = QFileInfo(folder).fileName().toLower();
    name.replace(QRegularExpression(QStringLiteral("[^a-z0-9-]+")), QStringLiteral("-"));
    name.remove(QRegularExpression(QStringLiteral("^[^a-z]+|-+$")));
    spec.name = name.left(Job::JobSpec::MaxNameLength);
    spec.recipe.algorithm = QStringLiteral("grpo");
    spec.pools = {Job::Pool{QStringLiteral("train"), QString(), 1, 8}};
    return spec;
}

Result<Job::JobSpec> SubmitWizard::specForPath(const QString &path)
{
    const QFileInfo info(path);
    if (info.isDir()) {
        const QString inside = QDir(info.absoluteFilePath()).filePath(QStringLiteral("jobspec.json"));
        return QFileInfo(inside).isFile() ? Job::JobSpec::load(inside) : Result<Job::JobSpec>(specForFolder(info.absoluteFilePath()));
    }
    if (!info.exists()) return Error::notFound(tr("%1 does not exist: give a JobSpec file or a code folder.").arg(path));
    return Job::JobSpec::load(info.absoluteFilePath());
}

const std::optional<Job::CapsuleListing> &SubmitWizard::listing() const
{
    return m_code->listing();
}

Job::JobSpec SubmitWizard::spec() const
{
    Job::JobSpec spec = m_initial;
    m_code->apply(spec);
    m_recipe->apply(spec);
    m_resources->apply(spec);
    return spec;
}

QStringList SubmitWizard::problemsOf(const QStringList &prefixes) const
{
    QStringList out;
    for (const QString &problem : spec().problems()) {
        for (const QString &prefix : prefixes) {
            if (problem.startsWith(prefix + u':') || problem.startsWith(prefix + u'.') || problem.startsWith(prefix + u'[')) {
                out << problem;
                break;
            }
        }
    }
    return out;
}

void SubmitWizard::reject()
{
    // A submission under way is cancelled and cleaned up first; the window closes after.
    if (m_submit->isSubmitting()) {
        button(QWizard::CancelButton)->setEnabled(false);
        m_submit->cancel([this] { QWizard::reject(); });
        return;
    }
    QWizard::reject();
}

} // namespace Starforge::Gui
