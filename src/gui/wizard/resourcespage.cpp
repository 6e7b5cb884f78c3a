#include "gui/wizard/resourcespage.h"

#include "core/session/session.h"
#include "gui/palettefollow.h"
#include "gui/wizard/submitwizard.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace Starforge::Gui {

namespace {

enum PoolColumn { NameColumn, SeriesColumn, NodesColumn, GpusColumn, VerdictColumn, PoolColumns };

Tones::Tone verdictTone(Cluster::Fit fit)
{
    switch (fit) {
    case Cluster::Fit::FitsNow: return Tones::Tone::Success;
    case Cluster::Fit::FitsWhenFree: return Tones::Tone::Warning;
    case Cluster::Fit::NeverFits: return Tones::Tone::Error;
    }
    return Tones::Tone::Info;
}

QString noStyle(const QPalette &)
{
    return {};
}

} // namespace

ResourcesPage::ResourcesPage(SubmitWizard *wizard)
    : QWizardPage(wizard)
    , m_wizard(wizard)
    , m_pools(new QTableWidget(0, PoolColumns, this))
    , m_addPool(new QPushButton(tr("Add a &generation pool"), this))
    , m_removePool(new QPushButton(tr("&Remove the second pool"), this))
    , m_capacityNote(new QLabel(this))
    , m_poolsWarning(new QLabel(this))
    , m_storage(new QCheckBox(tr("Mount the &storage volume (checkpoints, results)"), this))
    , m_storageNote(new QLabel(this))
    , m_corpus(new QCheckBox(tr("Mount the &corpus volume, read-only"), this))
    , m_corpusNote(new QLabel(this))
    , m_problems(new QLabel(this))
    , m_submitAnyway(new QCheckBox(tr("Submit it &anyway: it waits as Pending until the cluster has such nodes"), this))
{
    setTitle(tr("Resources"));
    setSubTitle(tr("The pools of GPU machines the job runs on, with what the cluster has free now, and its volumes."));
    m_pools->setObjectName(QStringLiteral("poolsTable"));
    m_pools->setAccessibleName(tr("Pools"));
    m_pools->setHorizontalHeaderLabels({tr("Pool"), tr("GPU series (free/total)"), tr("Nodes"), tr("GPUs per node"), tr("Fit")});
    m_pools->verticalHeader()->hide();
    m_pools->horizontalHeader()->setSectionResizeMode(SeriesColumn, QHeaderView::ResizeToContents);
    m_pools->horizontalHeader()->setStretchLastSection(true);
    m_pools->setSelectionMode(QAbstractItemView::NoSelection);
    m_pools->setFocusPolicy(Qt::NoFocus);   // the cell widgets take focus, in Tab order
    m_pools->setMaximumHeight(110);
    m_addPool->setObjectName(QStringLiteral("addPoolButton"));
    m_addPool->setAccessibleName(tr("Add a generation pool"));
    m_removePool->setObjectName(QStringLiteral("removePoolButton"));
    m_removePool->setAccessibleName(tr("Remove the second pool"));
    m_capacityNote->setObjectName(QStringLiteral("capacityNote"));
    m_capacityNote->setWordWrap(true);
    m_poolsWarning->setObjectName(QStringLiteral("poolsWarning"));
    m_poolsWarning->setWordWrap(true);
    m_poolsWarning->setTextInteractionFlags(Qt::TextSelectableByMouse);
    followTone(m_poolsWarning, Tones::Tone::Warning);   // a caution, not a problem
    m_storage->setObjectName(QStringLiteral("storageCheck"));
    m_storage->setAccessibleName(tr("Mount the storage volume"));
    m_storageNote->setObjectName(QStringLiteral("storageNote"));
    m_storageNote->setWordWrap(true);
    m_corpus->setObjectName(QStringLiteral("corpusCheck"));
    m_corpus->setAccessibleName(tr("Mount the corpus volume"));
    m_corpusNote->setObjectName(QStringLiteral("corpusNote"));
    m_corpusNote->setWordWrap(true);
    m_problems->setObjectName(QStringLiteral("resourcesProblems"));
    m_problems->setWordWrap(true);
    m_problems->setTextInteractionFlags(Qt::TextSelectableByMouse);
    followTone(m_problems, Tones::Tone::Error);
    m_submitAnyway->setObjectName(QStringLiteral("submitAnywayCheck"));
    m_submitAnyway->setAccessibleName(tr("Submit a job that can never fit anyway"));
    m_submitAnyway->hide();
    connect(m_submitAnyway, &QCheckBox::toggled, this, [this] { refresh(); });

    auto *layout = new QVBoxLayout(this);
    auto *poolsLabel = new QLabel(tr("Pools (the first holds the Ray head):"), this);
    layout->addWidget(poolsLabel);
    layout->addWidget(m_pools);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_addPool);
    buttons->addWidget(m_removePool);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    layout->addWidget(m_capacityNote);
    layout->addWidget(m_poolsWarning);
    layout->addSpacing(8);
    layout->addWidget(m_storage);
    layout->addWidget(m_storageNote);
    layout->addWidget(m_corpus);
    layout->addWidget(m_corpusNote);
    layout->addWidget(m_problems);
    layout->addWidget(m_submitAnyway);
    layout->addStretch(1);

    connect(m_addPool, &QPushButton::clicked, this, [this] {
        addPoolRow(Job::Pool{QStringLiteral("generation"), m_rows.isEmpty() ? QString() : m_rows.first().series->currentData().toString(), 1,
                             m_rows.isEmpty() ? 8 : m_rows.first().gpus->value()});
        m_rows.last().name->setFocus();
        refresh();
    });
    connect(m_removePool, &QPushButton::clicked, this, [this] {
        if (m_rows.size() < 2) return;
        m_rows.removeLast();
        m_pools->removeRow(m_pools->rowCount() - 1);
        m_addPool->setFocus();
        refresh();
    });
    connect(m_storage, &QCheckBox::toggled, this, &ResourcesPage::refresh);
    connect(m_corpus, &QCheckBox::toggled, this, &ResourcesPage::refresh);
    if (Session *session = m_wizard->session()) {
        connect(session, &Session::partsChanged, this, &ResourcesPage::followCapacity);
        connect(session, &Session::stateChanged, this, &ResourcesPage::refresh);
    }
}

void ResourcesPage::followCapacity()
{
    Cluster::CapacityTracker *tracker = m_wizard->session() ? m_wizard->session()->capacity() : nullptr;
    if (tracker == m_followed && tracker) return;
    if (m_followed) disconnect(m_followed, nullptr, this, nullptr);
    m_followed = tracker;
    if (tracker) {
        connect(tracker, &Cluster::CapacityTracker::changed, this, [this] {
            fillSeries();
            refresh();
        });
        connect(tracker, &Cluster::CapacityTracker::synced, this, [this] {
            fillSeries();
            refresh();
        });
    }
    fillSeries();
    refresh();
}

void ResourcesPage::addPoolRow(const Job::Pool &pool)
{
    const int r = m_pools->rowCount();
    m_pools->insertRow(r);
    const QString which = r == 0 ? tr("primary pool") : tr("second pool");
    Row row{new QLineEdit(pool.name, m_pools), new QComboBox(m_pools), new QSpinBox(m_pools), new QSpinBox(m_pools), new QLabel(m_pools)};
    row.name->setObjectName(QStringLiteral("poolName%1").arg(r));
    row.name->setAccessibleName(tr("Name of the %1").arg(which));
    row.series->setObjectName(QStringLiteral("poolSeries%1").arg(r));
    row.series->setAccessibleName(tr("GPU series of the %1").arg(which));
    row.series->addItem(pool.series, pool.series);
    row.nodes->setObjectName(QStringLiteral("poolNodes%1").arg(r));
    row.nodes->setAccessibleName(tr("Nodes of the %1").arg(which));
    row.nodes->setRange(1, 1024);
    row.nodes->setValue(pool.nodes);
    row.gpus->setObjectName(QStringLiteral("poolGpus%1").arg(r));
    row.gpus->setAccessibleName(tr("GPUs per node of the %1").arg(which));
    row.gpus->setRange(1, 64);
    row.gpus->setValue(pool.gpusPerNode);
    row.verdict->setObjectName(QStringLiteral("poolVerdict%1").arg(r));
    row.verdict->setAccessibleName(tr("Fit of the %1").arg(which));
    row.verdict->setWordWrap(true);
    row.verdict->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    row.verdict->setFocusPolicy(Qt::StrongFocus);   // a screen reader user tabs to it and hears the sentence
    m_pools->setCellWidget(r, NameColumn, row.name);
    m_pools->setCellWidget(r, SeriesColumn, row.series);
    m_pools->setCellWidget(r, NodesColumn, row.nodes);
    m_pools->setCellWidget(r, GpusColumn, row.gpus);
    m_pools->setCellWidget(r, VerdictColumn, row.verdict);
    m_pools->setRowHeight(r, 40);
    connect(row.name, &QLineEdit::textChanged, this, &ResourcesPage::refresh);
    connect(row.series, &QComboBox::currentIndexChanged, this, &ResourcesPage::refresh);
    connect(row.nodes, &QSpinBox::valueChanged, this, &ResourcesPage::refresh);
    connect(row.gpus, &QSpinBox::valueChanged, this, &ResourcesPage::refresh);
    m_rows.append(row);
    fillSeries();
}

void ResourcesPage::load(const Job::JobSpec &spec)
{
    m_loading = true;
    m_rows.clear();
    m_pools->setRowCount(0);
    const QList<Job::Pool> pools = spec.pools.isEmpty() ? QList<Job::Pool>{Job::Pool{QStringLiteral("train"), QString(), 1, 8}} : spec.pools;
    for (const Job::Pool &pool : pools) addPoolRow(pool);
    m_storage->setChecked(spec.storage);
    m_corpus->setChecked(spec.corpus);
    m_loading = false;
    followCapacity();
}

void ResourcesPage::apply(Job::JobSpec &spec) const
{
    spec.pools.clear();
    for (const Row &row : m_rows) {
        spec.pools.append(Job::Pool{row.name->text().trimmed(), row.series->currentData().toString(), row.nodes->value(), row.gpus->value()});
    }
    spec.storage = m_storage->isEnabled() && m_storage->isChecked();
    spec.corpus = m_corpus->isChecked();
}

void ResourcesPage::fillSeries()
{
    const Cluster::CapacityTracker *tracker = m_followed;
    const bool known = tracker && tracker->isSynced();
    QList<Cluster::SeriesSummary> all = known ? tracker->model().allSeries() : QList<Cluster::SeriesSummary>{};
    for (Row &row : m_rows) {
        const QSignalBlocker blocker(row.series);
        const QString current = row.series->currentData().toString();
        row.series->clear();
        bool present = false;
        for (const Cluster::SeriesSummary &s : all) {
            if (s.capacity == 0) continue;   // CPU-only nodes with a label
            row.series->addItem(tr("%1 — %2/%3 GPUs free").arg(s.series).arg(s.free).arg(s.capacity), s.series);
            present = present || s.series == current;
        }
        if (!present && !current.isEmpty()) {
            row.series->addItem(known ? tr("%1 — not in this cluster").arg(current) : current, current);
        }
        const int at = row.series->findData(current);
        row.series->setCurrentIndex(at >= 0 ? at : 0);
    }
}

void ResourcesPage::initializePage()
{
    fillSeries();
    refresh();
}

QString ResourcesPage::verdictOf(int row) const
{
    return m_verdicts.value(row);
}

QString ResourcesPage::sentenceOf(int row) const
{
    return m_sentences.value(row);
}

void ResourcesPage::refresh()
{
    if (m_loading) return;
    const Session *session = m_wizard->session();
    const Job::ClusterSettings settings = session ? session->settings() : Job::ClusterSettings();
    // What the profile can mount.
    const bool hasStorage = !settings.storagePvc.isEmpty();
    const bool hasCorpus = !settings.corpusPvc.isEmpty();
    m_storage->setEnabled(hasStorage);
    m_storageNote->setText(hasStorage ? tr("Volume claim %1 at %2%3.")
                                            .arg(settings.storagePvc, settings.storageMount.isEmpty() ? settings.storageRoot : settings.storageMount,
                                                 settings.storageShared ? tr(", shared between nodes") : tr(", not shared between nodes"))
                                      : tr("Off: the profile has no storage volume claim (FORGE_K8S_STORAGE_PVC)."));
    {
        const QSignalBlocker blocker(m_corpus);
        if (!hasCorpus) m_corpus->setChecked(false);
    }
    m_corpus->setEnabled(hasCorpus);
    m_corpusNote->setText(hasCorpus ? tr("Volume claim %1, read-only.").arg(settings.corpusPvc)
                                    : tr("Off: the profile has no corpus volume claim (FORGE_K8S_CORPUS_PVC)."));
    const Job::JobSpec spec = m_wizard->spec();
    // Only the algorithms that generate while they train can put generation on its own pool.
    const bool generationPool = spec.recipe.algorithm.isEmpty() || Job::JobSpec::generationPoolAlgorithms().contains(spec.recipe.algorithm);
    m_addPool->setEnabled(m_rows.size() < 2 && generationPool);
    m_addPool->setToolTip(generationPool ? QString()
                                         : tr("%1 runs on one pool: only %2 generate on a pool of their own.")
                                               .arg(spec.recipe.algorithm, Job::JobSpec::generationPoolAlgorithms().join(QStringLiteral(", "))));
    m_removePool->setEnabled(m_rows.size() > 1);
    const QStringList warnings = spec.warnings();
    m_poolsWarning->setText(warnings.join(u'\n'));
    m_poolsWarning->setVisible(!warnings.isEmpty());

    QStringList problems = m_wizard->problemsOf({QStringLiteral("pools"), QStringLiteral("storage"), QStringLiteral("corpus")});
    problems << spec.problemsWith(settings.storageShared, hasCorpus);

    // The live verdict, from the model the heatmap draws. A pool that can never fit is asked
    // about (Submit it anyway), not refused outright: the cluster may be about to grow.
    QStringList never;
    m_verdicts.clear();
    m_sentences.clear();
    const Cluster::CapacityTracker *tracker = m_followed;
    if (tracker && tracker->isSynced()) {
        Cluster::FitRequest request;
        for (const Job::Pool &p : spec.pools) request.pools.append(Cluster::PoolRequest{p.name, p.series, p.nodes, p.gpusPerNode});
        const Cluster::FitVerdict verdict = tracker->model().fit(request);
        for (int i = 0; i < m_rows.size(); ++i) {
            const Cluster::PoolVerdict *pv = nullptr;
            for (const Cluster::PoolVerdict &candidate : verdict.pools) {
                if (candidate.request.name == spec.pools.value(i).name) pv = &candidate;
            }
            if (!pv && i < verdict.pools.size()) pv = &verdict.pools.at(i);
            const QString name = pv ? Cluster::fitName(pv->fit) : QString();
            const QString sentence = pv ? pv->sentence : QString();
            m_verdicts << name;
            m_sentences << sentence;
            m_rows[i].verdict->setText(QStringLiteral("<b>%1</b>: %2").arg(name.toHtmlEscaped(), sentence.toHtmlEscaped()));
            if (pv) followTone(m_rows[i].verdict, verdictTone(pv->fit));
            else followPalette(m_rows[i].verdict, noStyle);
            m_rows[i].verdict->setToolTip(sentence);
            m_rows[i].verdict->setAccessibleDescription(name + QStringLiteral(": ") + sentence);
            if (pv && pv->fit == Cluster::Fit::NeverFits) {
                never << tr("pools[%1]: %2 can never run on this cluster: %3").arg(i).arg(spec.pools.value(i).name, sentence);
            }
        }
        m_capacityNote->setText(verdict.fit == Cluster::Fit::FitsWhenFree
                                    ? tr("The job fits once busy GPUs free up; it waits as Pending until then (you can submit it now).")
                                    : QString());
    } else {
        for (Row &row : m_rows) {
            row.verdict->setText(tr("Capacity unknown"));
            followPalette(row.verdict, noStyle);
            m_verdicts << QString();
            m_sentences << QString();
        }
        m_capacityNote->setText(!session || !session->isUp() ? tr("Not connected: the fit verdict appears once the cluster answers.")
                                                             : tr("Reading the cluster's nodes and pods…"));
    }
    const QStringList shown = problems + never;
    m_problems->setText(shown.join(u'\n'));
    m_problems->setVisible(!shown.isEmpty());
    m_submitAnyway->setVisible(!never.isEmpty());
    if (never.isEmpty() && m_submitAnyway->isChecked()) {
        const QSignalBlocker blocker(m_submitAnyway);
        m_submitAnyway->setChecked(false);   // asked again if it comes back
    }
    m_complete = problems.isEmpty() && (never.isEmpty() || m_submitAnyway->isChecked());
    Q_EMIT completeChanged();
    Q_EMIT verdictsUpdated();
}

bool ResourcesPage::isComplete() const
{
    return m_complete;
}

} // namespace Starforge::Gui
