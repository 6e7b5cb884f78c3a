#include "gui/wizard/codepage.h"

#include "core/job/submitter.h"
#include "gui/palettefollow.h"
#include "gui/wizard/submitwizard.h"
#include "models/codetreemodel.h"

#include <QDir>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace Starforge::Gui {

namespace {

QLabel *problemLabel(QWidget *parent, const QString &objectName)
{
    auto *label = new QLabel(parent);
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    followTone(label, Tones::Tone::Error);
    return label;
}

} // namespace

CodePage::CodePage(SubmitWizard *wizard)
    : QWizardPage(wizard)
    , m_wizard(wizard)
    , m_folder(new QLineEdit(this))
    , m_browse(new QPushButton(tr("Br&owse…"), this))
    , m_name(new QLineEdit(this))
    , m_nameProblem(problemLabel(this, QStringLiteral("jobNameProblem")))
    , m_excludes(new QLineEdit(this))
    , m_tree(new QTreeView(this))
    , m_model(new Models::CodeTreeModel(this))
    , m_summary(new QLabel(this))
    , m_problems(problemLabel(this, QStringLiteral("codeProblems")))
{
    setTitle(tr("Code"));
    setSubTitle(tr("The folder that becomes the job's Capsule, and the job's name."));
    m_folder->setObjectName(QStringLiteral("codeFolderEdit"));
    m_folder->setAccessibleName(tr("Code folder"));
    m_browse->setObjectName(QStringLiteral("codeFolderBrowse"));
    m_browse->setAccessibleName(tr("Browse for the code folder"));
    m_name->setObjectName(QStringLiteral("jobNameEdit"));
    m_name->setAccessibleName(tr("Job name"));
    m_name->setMaxLength(Job::JobSpec::MaxNameLength + 20);   // longer is shown as a problem, not cut
    m_excludes->setObjectName(QStringLiteral("excludesEdit"));
    m_excludes->setAccessibleName(tr("Exclude patterns"));
    m_excludes->setPlaceholderText(tr("gitignore patterns, separated by spaces, e.g. data/raw/ *.ipynb"));
    m_tree->setObjectName(QStringLiteral("codeTree"));
    m_tree->setAccessibleName(tr("Files of the code folder"));
    m_tree->setModel(m_model);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(Models::CodeTreeModel::NameColumn, QHeaderView::Stretch);
    m_tree->header()->setStretchLastSection(false);
    m_tree->header()->resizeSection(Models::CodeTreeModel::SizeColumn, 90);
    m_tree->header()->resizeSection(Models::CodeTreeModel::ExcludedByColumn, 260);
    m_summary->setObjectName(QStringLiteral("capsuleSummary"));
    m_summary->setAccessibleName(tr("Capsule estimate"));
    m_summary->setWordWrap(true);

    auto *folderRow = new QHBoxLayout;
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(m_browse);
    auto *form = new QFormLayout;
    auto *folderLabel = new QLabel(tr("Code &folder:"), this);
    folderLabel->setBuddy(m_folder);
    form->addRow(folderLabel, folderRow);
    auto *nameLabel = new QLabel(tr("Job na&me:"), this);
    nameLabel->setBuddy(m_name);
    form->addRow(nameLabel, m_name);
    form->addRow(QString(), m_nameProblem);
    auto *excludesLabel = new QLabel(tr("E&xcludes:"), this);
    excludesLabel->setBuddy(m_excludes);
    form->addRow(excludesLabel, m_excludes);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    auto *treeLabel = new QLabel(tr("File&s (greyed: left out of the Capsule, with the pattern that drops them):"), this);
    treeLabel->setBuddy(m_tree);
    layout->addWidget(treeLabel);
    layout->addWidget(m_tree, 1);
    layout->addWidget(m_summary);
    layout->addWidget(m_problems);

    m_rescan.setSingleShot(true);
    m_rescan.setInterval(250);
    connect(&m_rescan, &QTimer::timeout, this, &CodePage::rescan);
    connect(&m_watcher, &QFutureWatcher<Result<Job::CapsuleListing>>::finished, this, &CodePage::onListed);
    connect(m_folder, &QLineEdit::textChanged, this, [this] {
        m_rescan.start();
        refresh();
    });
    connect(m_excludes, &QLineEdit::textChanged, this, [this] {
        m_rescan.start();
        refresh();
    });
    connect(m_name, &QLineEdit::textChanged, this, &CodePage::refresh);
    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString chosen = m_wizard->chooseFolder ? m_wizard->chooseFolder(this, folder()) : QString();
        if (!chosen.isEmpty()) m_folder->setText(QDir::toNativeSeparators(chosen));
    });
}

CodePage::~CodePage()
{
    m_watcher.waitForFinished();
}

void CodePage::load(const Job::JobSpec &spec)
{
    // A JobSpec read from a job (a Resubmit) has no folder of its own: the person chooses it.
    m_initialFolder = spec.sourceDir.isEmpty() ? QString() : spec.codePath();
    m_folder->setText(QDir::toNativeSeparators(m_initialFolder));
    m_name->setText(spec.name);
    m_excludes->setText(spec.excludes.join(u' '));
    rescan();
}

QString CodePage::folder() const
{
    return QDir::cleanPath(QDir::fromNativeSeparators(m_folder->text().trimmed()));
}

void CodePage::apply(Job::JobSpec &spec) const
{
    spec.name = m_name->text();
    spec.excludes = m_excludes->text().split(u' ', Qt::SkipEmptyParts);
    // The folder the JobSpec came with keeps its relative form (the same canonical JobSpec, so
    // an unchanged tree is the same Capsule); another folder is the JobSpec's own.
    if (folder() != QDir::cleanPath(m_initialFolder)) {
        spec.sourceDir = QFileInfo(folder()).absoluteFilePath();
        spec.code = QStringLiteral(".");
    }
}

void CodePage::rescan()
{
    m_rescan.stop();
    if (m_watcher.isRunning()) {
        // The walk under way finishes first; its result is dropped for this newer one.
        m_rescan.start();
        return;
    }
    if (folder().isEmpty()) {
        m_listing.reset();
        m_listingError.clear();
        m_model->clear();
        m_summary->clear();
        refresh();
        return;
    }
    Job::JobSpec spec = m_wizard->spec();
    const Job::CapsuleOptions options = Job::capsuleOptionsFor(spec, QString(), Job::defaultRunnerPexPath());
    m_watcher.setFuture(QtConcurrent::run([options] { return Job::listCapsuleTree(options); }));
    refresh();
}

void CodePage::onListed()
{
    if (m_rescan.isActive()) return;   // a newer walk follows
    const Result<Job::CapsuleListing> listed = m_watcher.result();
    if (listed) {
        m_listing = *listed;
        m_listingError.clear();
        m_model->setListing(*listed);
        m_tree->expandToDepth(0);
        int excluded = 0;
        for (const Job::CapsuleTreeEntry &e : listed->entries) excluded += e.excludedBy.isEmpty() ? 0 : 1;
        m_summary->setText(tr("Capsule: %1 files, about %2 before compression (code, jobspec.json, manifest.json and runner.pex); %3 "
                              "left out.")
                               .arg(listed->fileCount)
                               .arg(Models::CodeTreeModel::formatSize(listed->bytes))
                               .arg(excluded));
    } else {
        m_listing.reset();
        m_listingError = listed.error().message;
        m_model->clear();
        m_summary->clear();
    }
    refresh();
    Q_EMIT m_wizard->specChanged();
}

void CodePage::refresh()
{
    const QStringList nameProblems = m_wizard->problemsOf({QStringLiteral("name")});
    m_nameProblem->setText(nameProblems.join(u'\n'));
    m_nameProblem->setVisible(!nameProblems.isEmpty());
    QStringList problems = m_wizard->problemsOf({QStringLiteral("code"), QStringLiteral("excludes")});
    if (folder().isEmpty()) {
        problems << tr("code: choose the folder with your training code (Browse…).");
    } else if (!QFileInfo(folder()).isDir()) {
        problems << tr("code: the folder %1 does not exist; choose the folder with your training code.").arg(folder());
    } else if (!m_listingError.isEmpty() && !isListing()) {
        problems << m_listingError;
    }
    m_problems->setText(problems.join(u'\n'));
    m_problems->setVisible(!problems.isEmpty());
    Q_EMIT completeChanged();
}

bool CodePage::isComplete() const
{
    return !isListing() && m_listing.has_value() && m_listingError.isEmpty() && QFileInfo(folder()).isDir()
        && m_wizard->problemsOf({QStringLiteral("name"), QStringLiteral("code"), QStringLiteral("excludes")}).isEmpty();
}

} // namespace Starforge::Gui
