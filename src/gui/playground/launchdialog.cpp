#include "gui/playground/launchdialog.h"

#include "core/cluster/capacity.h"
#include "gui/palettefollow.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

namespace Starforge::Gui {

LaunchDialog::LaunchDialog(const Job::ClusterSettings &settings, const Cluster::CapacityTracker *capacity, QWidget *parent)
    : QDialog(parent)
    , m_settings(settings)
    , m_model(new QLineEdit(this))
    , m_tokenizer(new QLineEdit(this))
    , m_series(new QComboBox(this))
    , m_gpus(new QSpinBox(this))
    , m_hours(new QSpinBox(this))
    , m_maxLen(new QSpinBox(this))
    , m_problems(new QLabel(this))
    , m_note(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Cancel, this))
{
    setObjectName(QStringLiteral("launchDialog"));
    setWindowTitle(tr("Launch a model"));
    m_model->setObjectName(QStringLiteral("launchModel"));
    m_model->setPlaceholderText(tr("Qwen/Qwen3-0.6B, or a checkpoint under %1").arg(settings.storageMount.isEmpty() ? settings.storageRoot : settings.storageMount));
    m_model->setAccessibleName(tr("Model"));
    m_model->setAccessibleDescription(tr("A model name, or the path of a checkpoint with Hugging Face weights under the storage root"));
    m_tokenizer->setPlaceholderText(tr("the model's own"));
    m_tokenizer->setAccessibleName(tr("Tokenizer"));
    m_series->setObjectName(QStringLiteral("launchSeries"));
    m_series->setEditable(true);   // a series the capacity view does not know yet can be typed
    m_series->setAccessibleName(tr("GPU series"));
    fillSeries(capacity);
    if (capacity) {
        for (auto signal : {&Cluster::CapacityTracker::changed, &Cluster::CapacityTracker::synced}) {
            connect(capacity, signal, this, [this, capacity] { fillSeries(capacity); });
        }
    }
    m_gpus->setRange(1, 64);
    m_gpus->setAccessibleName(tr("GPUs (tensor parallel size)"));
    m_hours->setRange(1, 7 * 24);
    m_hours->setValue(2);
    m_hours->setSuffix(tr(" h"));
    m_hours->setAccessibleName(tr("Time to live in hours"));
    m_hours->setToolTip(tr("The cluster ends the pod after this long, even if Starforge is closed."));
    m_maxLen->setRange(0, 1 << 20);
    m_maxLen->setSpecialValueText(tr("the model's own"));
    m_maxLen->setAccessibleName(tr("Maximum context length in tokens"));
    m_problems->setObjectName(QStringLiteral("launchProblems"));
    m_problems->setWordWrap(true);
    followTone(m_problems, Tones::Tone::Error);
    m_problems->setAccessibleName(tr("What to fix before launching"));
    auto *launch = m_buttons->addButton(tr("&Launch"), QDialogButtonBox::AcceptRole);
    launch->setObjectName(QStringLiteral("launchButton"));

    auto *form = new QFormLayout;
    form->addRow(tr("&Model:"), m_model);
    form->addRow(tr("&Tokenizer:"), m_tokenizer);
    form->addRow(tr("GPU &series:"), m_series);
    form->addRow(tr("&GPUs:"), m_gpus);
    form->addRow(tr("Time to l&ive:"), m_hours);
    form->addRow(tr("Max &context:"), m_maxLen);
    m_note->setObjectName(QStringLiteral("launchNote"));
    m_note->setWordWrap(true);
    m_note->hide();
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_note);
    layout->addLayout(form);
    layout->addWidget(m_problems);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        if (problems().isEmpty()) accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QLineEdit *edit : {m_model, m_tokenizer}) connect(edit, &QLineEdit::textChanged, this, &LaunchDialog::check);
    connect(m_series, &QComboBox::currentTextChanged, this, &LaunchDialog::check);
    for (QSpinBox *spin : {m_gpus, m_hours, m_maxLen}) connect(spin, &QSpinBox::valueChanged, this, &LaunchDialog::check);
    check();
}

void LaunchDialog::fillSeries(const Cluster::CapacityTracker *capacity)
{
    if (!capacity || !capacity->isSynced()) return;
    // The free GPUs move; what was chosen or typed stays.
    const QString chosen = m_series->count() > 0 || !m_series->currentText().isEmpty() ? request().series : QString();
    const QSignalBlocker blocker(m_series);
    m_series->clear();
    for (const Cluster::SeriesSummary &s : capacity->model().allSeries()) {
        m_series->addItem(tr("%1 (%2 of %3 GPUs free)").arg(s.series).arg(s.free).arg(s.capacity), s.series);
    }
    const int index = m_series->findData(chosen);
    if (index >= 0) m_series->setCurrentIndex(index);
    else m_series->setCurrentText(chosen);
    if (chosen.isEmpty() && m_series->count() > 0) m_series->setCurrentIndex(0);
    check();
}

void LaunchDialog::setNote(const QString &text)
{
    m_note->setText(text);
    m_note->setVisible(!text.isEmpty());
}

void LaunchDialog::setRequest(const Playground::LaunchRequest &request)
{
    m_fromJob = request;
    m_model->setText(request.model);
    m_tokenizer->setText(request.tokenizer);
    const int series = m_series->findData(request.series);
    if (series >= 0) m_series->setCurrentIndex(series);
    else if (!request.series.isEmpty()) m_series->setCurrentText(request.series);
    m_gpus->setValue(request.gpus);
    m_hours->setValue(std::max(1, request.ttlSeconds / 3600));
    m_maxLen->setValue(request.maxModelLen);
    check();
}

Playground::LaunchRequest LaunchDialog::request() const
{
    Playground::LaunchRequest out;
    out.model = m_model->text().trimmed();
    out.tokenizer = m_tokenizer->text().trimmed();
    // The job and step stay only while the model is still that job's checkpoint.
    if (!m_fromJob.jobId.isEmpty() && out.model == m_fromJob.model) {
        out.jobId = m_fromJob.jobId;
        out.step = m_fromJob.step;
    }
    const int index = m_series->findText(m_series->currentText());
    out.series = index >= 0 ? m_series->itemData(index).toString() : m_series->currentText().trimmed();
    out.gpus = m_gpus->value();
    out.ttlSeconds = m_hours->value() * 3600;
    out.maxModelLen = m_maxLen->value();
    return out;
}

QStringList LaunchDialog::problems() const
{
    return Playground::PlaygroundPod::problems(request(), m_settings);
}

void LaunchDialog::check()
{
    const QStringList found = problems();
    m_problems->setText(found.join(u'\n'));
    m_problems->setVisible(!found.isEmpty());
    if (QPushButton *launch = findChild<QPushButton *>(QStringLiteral("launchButton"))) launch->setEnabled(found.isEmpty());
}

} // namespace Starforge::Gui
