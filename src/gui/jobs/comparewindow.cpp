#include "gui/jobs/comparewindow.h"

#include "core/job/jobrecord.h"
#include "core/job/progressfollower.h"
#include "core/session/session.h"
#include "gui/userprompts.h"
#include "models/tones.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSaveFile>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

namespace Starforge::Gui {

using Models::RunComparisonModel;

// ---------------------------------------------------------------------------------------------

ComparePlot::ComparePlot(QWidget *parent) : QWidget(parent), m_cursorX(std::numeric_limits<double>::quiet_NaN())
{
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAccessibleName(tr("Runs compared"));
}

QColor ComparePlot::colorOf(int run)
{
    // Okabe and Ito's colours, told apart with the common kinds of colour blindness; their
    // black is the palette's text colour, so it shows on a dark background too.
    static const QList<QColor> colors{QColor(0x00, 0x72, 0xb2), QColor(0xd5, 0x5e, 0x00), QColor(0x00, 0x9e, 0x73),
                                      QColor(0xcc, 0x79, 0xa7), QColor(0xe6, 0x9f, 0x00), QColor(0x56, 0xb4, 0xe9)};
    const int i = run % (colors.size() + 1);
    return i < colors.size() ? colors.at(i) : Tones::current().color(QPalette::Text);
}

void ComparePlot::setModel(RunComparisonModel *model)
{
    if (m_model) disconnect(m_model, nullptr, this, nullptr);
    m_model = model;
    if (model) connect(model, &QAbstractItemModel::modelReset, this, &ComparePlot::rebuild);
    rebuild();
}

void ComparePlot::setMetric(const QString &metric)
{
    m_metric = metric;
    rebuild();
}

void ComparePlot::setAxis(RunComparisonModel::Axis axis)
{
    m_axis = axis;
    m_cursorX = std::numeric_limits<double>::quiet_NaN();
    rebuild();
}

void ComparePlot::setLogScale(bool on)
{
    m_log = on;
    rebuild();
}

double ComparePlot::y(double value) const
{
    return m_log ? std::log10(value) : value;
}

void ComparePlot::rebuild()
{
    m_series.clear();
    m_xs.clear();
    m_hidden = 0;
    bool any = false;
    m_minX = m_minY = std::numeric_limits<double>::max();
    m_maxX = m_maxY = std::numeric_limits<double>::lowest();
    if (m_model) {
        for (const RunComparisonModel::Run &run : m_model->runs()) {
            QList<QPointF> drawn;
            for (const QPointF &p : m_model->series(run.jobId, m_metric, m_axis)) {
                if (m_log && p.y() <= 0) {
                    ++m_hidden;
                    continue;
                }
                const QPointF q(p.x(), y(p.y()));
                drawn << q;
                m_xs << q.x();
                m_minX = std::min(m_minX, q.x());
                m_maxX = std::max(m_maxX, q.x());
                m_minY = std::min(m_minY, q.y());
                m_maxY = std::max(m_maxY, q.y());
                any = true;
            }
            m_series << drawn;
        }
    }
    if (!any) m_minX = 0, m_maxX = 1, m_minY = 0, m_maxY = 1;
    if (m_maxX <= m_minX) m_maxX = m_minX + 1;
    if (m_maxY <= m_minY) m_maxY = m_minY + (m_minY == 0 ? 1 : std::abs(m_minY) * 0.1);
    std::sort(m_xs.begin(), m_xs.end());
    m_xs.erase(std::unique(m_xs.begin(), m_xs.end()), m_xs.end());
    setAccessibleDescription(summaryText());
    update();
}

QRectF ComparePlot::plotArea() const
{
    const QFontMetrics fm = fontMetrics();
    return QRectF(fm.horizontalAdvance(QStringLiteral("-0.000e+00")) + 8, fm.height() + 6, width() - fm.horizontalAdvance(QStringLiteral("-0.000e+00")) - 20,
                  height() - 3 * fm.height() - 12);
}

QPointF ComparePlot::toScreen(const QPointF &p) const
{
    const QRectF a = plotArea();
    return {a.left() + (p.x() - m_minX) / (m_maxX - m_minX) * a.width(), a.bottom() - (p.y() - m_minY) / (m_maxY - m_minY) * a.height()};
}

QStringList ComparePlot::valuesAtCursor() const
{
    QStringList out;
    if (!m_model || std::isnan(m_cursorX)) return out;
    for (int r = 0; r < m_series.size(); ++r) {
        // Each run's point nearest the cursor's x.
        const QList<QPointF> &s = m_series.at(r);
        if (s.isEmpty()) continue;
        const QPointF *best = &s.first();
        for (const QPointF &p : s) {
            if (std::abs(p.x() - m_cursorX) < std::abs(best->x() - m_cursorX)) best = &p;
        }
        const double value = m_log ? std::pow(10.0, best->y()) : best->y();
        out << tr("%1: %2").arg(m_model->runs().at(r).label, QLocale().toString(value, 'g', 5));
    }
    return out;
}

void ComparePlot::setCursorX(double x)
{
    m_cursorX = x;
    setAccessibleDescription(summaryText());
    update();
}

QString ComparePlot::summaryText() const
{
    if (!m_model || m_model->runs().isEmpty()) return tr("No runs.");
    const QString against = m_axis == RunComparisonModel::Axis::Step ? tr("the step") : tr("the wall time");
    QStringList parts;
    for (int r = 0; r < m_series.size() && r < m_model->runs().size(); ++r) {
        const QList<QPointF> &s = m_series.at(r);
        if (s.isEmpty()) {
            parts << tr("%1 has no %2").arg(m_model->runs().at(r).label, m_metric);
            continue;
        }
        const double last = m_log ? std::pow(10.0, s.last().y()) : s.last().y();
        parts << tr("%1 ends at %2 after %3 points").arg(m_model->runs().at(r).label, QLocale().toString(last, 'g', 5)).arg(s.size());
    }
    QString text = tr("%1 against %2%3: %4.").arg(m_metric, against, m_log ? tr(" (log scale)") : QString(), parts.join(QStringLiteral("; ")));
    if (const QStringList at = valuesAtCursor(); !at.isEmpty()) text += tr(" At the cursor: %1.").arg(at.join(QStringLiteral(", ")));
    return text;
}

void ComparePlot::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QRectF area = plotArea();
    const QPalette pal = palette();
    painter.fillRect(rect(), pal.base());
    painter.setPen(pal.color(QPalette::Mid));
    painter.drawRect(area);
    const QFontMetrics fm = fontMetrics();
    painter.setPen(pal.color(QPalette::Text));
    // Axis ends: the y range (as values) and the x range.
    const auto yText = [this](double v) { return QLocale().toString(m_log ? std::pow(10.0, v) : v, 'g', 4); };
    painter.drawText(QRectF(0, area.top() - fm.height() / 2.0, area.left() - 4, fm.height()), Qt::AlignRight, yText(m_maxY));
    painter.drawText(QRectF(0, area.bottom() - fm.height() / 2.0, area.left() - 4, fm.height()), Qt::AlignRight, yText(m_minY));
    painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), fm.height()), Qt::AlignLeft, QLocale().toString(m_minX, 'g', 6));
    painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), fm.height()), Qt::AlignRight, QLocale().toString(m_maxX, 'g', 6));
    painter.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), fm.height()), Qt::AlignHCenter,
                     m_axis == RunComparisonModel::Axis::Step ? tr("step") : tr("wall time (s)"));
    // The runs.
    for (int r = 0; r < m_series.size(); ++r) {
        const QList<QPointF> &s = m_series.at(r);
        if (s.isEmpty()) continue;
        QPainterPath path(toScreen(s.first()));
        for (const QPointF &p : s) path.lineTo(toScreen(p));
        painter.setPen(QPen(colorOf(r), 2));
        painter.drawPath(path);
    }
    // The legend, top right inside the plot (training curves mostly start high on the left),
    // on the base colour so a curve under it does not cross its text.
    if (m_model && !m_model->runs().isEmpty()) {
        qreal widest = 0;
        for (const RunComparisonModel::Run &run : m_model->runs()) widest = std::max<qreal>(widest, fm.horizontalAdvance(run.label));
        const QRectF box(area.right() - widest - 34, area.top() + 4, widest + 30, fm.height() * m_model->runs().size() + 4);
        painter.fillRect(box, pal.base());
        qreal y = box.top() + 2;
        for (int r = 0; r < m_model->runs().size(); ++r) {
            painter.fillRect(QRectF(box.left() + 4, y + fm.height() / 2.0 - 2, 14, 4), colorOf(r));
            painter.setPen(pal.color(QPalette::Text));
            painter.drawText(QPointF(box.left() + 24, y + fm.ascent()), m_model->runs().at(r).label);
            y += fm.height();
        }
    }
    // The cursor and the values of every run there.
    if (!std::isnan(m_cursorX)) {
        const qreal x = toScreen({m_cursorX, m_minY}).x();
        painter.setPen(QPen(pal.color(QPalette::Mid), 1, Qt::DashLine));
        painter.drawLine(QPointF(x, area.top()), QPointF(x, area.bottom()));
        const QStringList values = valuesAtCursor();
        painter.setPen(pal.color(QPalette::Text));
        painter.drawText(QRectF(0, area.bottom() + fm.height() + 4, width(), fm.height()), Qt::AlignHCenter,
                         tr("at %1: %2").arg(QLocale().toString(m_cursorX, 'g', 6), values.join(QStringLiteral(" · "))));
    }
    if (m_hidden > 0) {
        painter.drawText(QRectF(area.left(), 0, area.width(), fm.height()), Qt::AlignRight,
                         tr("%1 points of zero or below left out on the log scale").arg(m_hidden));
    }
}

void ComparePlot::mouseMoveEvent(QMouseEvent *event)
{
    const QRectF a = plotArea();
    if (a.width() <= 0 || m_xs.isEmpty()) return;
    setCursorX(m_minX + (event->position().x() - a.left()) / a.width() * (m_maxX - m_minX));
}

void ComparePlot::leaveEvent(QEvent *)
{
    setCursorX(std::numeric_limits<double>::quiet_NaN());
}

void ComparePlot::keyPressEvent(QKeyEvent *event)
{
    if (m_xs.isEmpty()) return QWidget::keyPressEvent(event);
    // Left/Right step through the xs any run has; Home/End to the ends.
    qsizetype at = std::isnan(m_cursorX) ? -1 : std::lower_bound(m_xs.cbegin(), m_xs.cend(), m_cursorX) - m_xs.cbegin();
    switch (event->key()) {
    case Qt::Key_Left: at = std::max<qsizetype>(0, at < 0 ? m_xs.size() - 1 : at - 1); break;
    case Qt::Key_Right: at = at < 0 ? 0 : std::min<qsizetype>(m_xs.size() - 1, at + 1); break;
    case Qt::Key_Home: at = 0; break;
    case Qt::Key_End: at = m_xs.size() - 1; break;
    default: return QWidget::keyPressEvent(event);
    }
    setCursorX(m_xs.at(std::clamp<qsizetype>(at, 0, m_xs.size() - 1)));
}

// ---------------------------------------------------------------------------------------------

CompareWindow::CompareWindow(Session *session, const QList<Job::JobRecord> &jobs, UserPrompts *prompts, QWidget *parent)
    : QDialog(parent)
    , m_session(session)
    , m_prompts(prompts)
    , m_model(new RunComparisonModel(this))
    , m_plot(new ComparePlot(this))
    , m_metric(new QComboBox(this))
    , m_axis(new QComboBox(this))
    , m_log(new QCheckBox(tr("&Log scale"), this))
    , m_status(new QLabel(this))
{
    setObjectName(QStringLiteral("compareWindow"));
    setWindowTitle(tr("Compare %n run(s)", nullptr, int(jobs.size())));
    m_metric->setAccessibleName(tr("Metric"));
    m_axis->setAccessibleName(tr("Against"));
    m_axis->addItem(tr("Step"), int(RunComparisonModel::Axis::Step));
    m_axis->addItem(tr("Wall time"), int(RunComparisonModel::Axis::WallTime));
    m_status->setWordWrap(true);
    m_status->setAccessibleName(tr("Comparison status"));
    auto *csv = new QPushButton(tr("Export &CSV…"), this);
    auto *png = new QPushButton(tr("Export &PNG…"), this);
    auto *metricLabel = new QLabel(tr("&Metric:"), this);
    metricLabel->setBuddy(m_metric);
    auto *axisLabel = new QLabel(tr("&Against:"), this);
    axisLabel->setBuddy(m_axis);
    auto *controls = new QHBoxLayout;
    controls->addWidget(metricLabel);
    controls->addWidget(m_metric, 1);
    controls->addWidget(axisLabel);
    controls->addWidget(m_axis);
    controls->addWidget(m_log);
    controls->addStretch();
    controls->addWidget(csv);
    controls->addWidget(png);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_status);
    m_plot->setModel(m_model);
    resize(900, 560);

    connect(m_metric, &QComboBox::currentTextChanged, m_plot, &ComparePlot::setMetric);
    connect(m_metric, &QComboBox::activated, this, [this] { m_metricChosen = true; });
    connect(m_axis, &QComboBox::currentIndexChanged, this, [this] { m_plot->setAxis(RunComparisonModel::Axis(m_axis->currentData().toInt())); });
    connect(m_log, &QCheckBox::toggled, m_plot, &ComparePlot::setLogScale);
    connect(m_model, &QAbstractItemModel::modelReset, this, &CompareWindow::fillMetrics);
    connect(csv, &QPushButton::clicked, this, [this] {
        const QString path = m_prompts->saveFile(this, tr("Export the runs as CSV"), QStringLiteral("runs.csv"), tr("CSV (*.csv)"));
        if (!path.isEmpty() && !exportCsv(path)) m_prompts->inform(this, tr("Export"), tr("Could not write %1.").arg(path));
    });
    connect(png, &QPushButton::clicked, this, [this] {
        const QString path = m_prompts->saveFile(this, tr("Export the plot as PNG"), QStringLiteral("runs.png"), tr("PNG (*.png)"));
        if (!path.isEmpty() && !exportPng(path)) m_prompts->inform(this, tr("Export"), tr("Could not write %1.").arg(path));
    });

    Job::ProgressFollower *follower = session ? session->progress() : nullptr;
    for (const Job::JobRecord &record : jobs) {
        const QString label = record.rayJobName.isEmpty() ? record.id : record.rayJobName;
        if (!record.archived) {
            // Live: what the follower has, and again each time it grows.
            const Job::JobProgress *progress = follower ? follower->progress(record.id) : nullptr;
            if (progress) m_model->setRun(record.id, label, *progress);
            else m_missing << tr("%1 has printed no progress yet").arg(label);
            if (follower) {
                connect(follower, &Job::ProgressFollower::progressChanged, this, [this, follower, id = record.id, label](const QString &changed) {
                    if (changed != id) return;
                    if (const Job::JobProgress *p = follower->progress(id)) {
                        m_missing.removeIf([&](const QString &m) { return m.startsWith(label + u' '); });
                        m_model->setRun(id, label, *p);
                        updateStatus();
                    }
                });
            }
            continue;
        }
        if (!session || !session->s3()) {
            m_missing << tr("%1: no bucket to read its archived log from").arg(label);
            continue;
        }
        ++m_waiting;
        Job::readArchivedProgress(session->s3(), record, this, [this, id = record.id, label](std::optional<Job::JobProgress> progress) {
            --m_waiting;
            if (progress && !progress->points().isEmpty()) m_model->setRun(id, label, *progress);
            else m_missing << tr("%1's archived driver log has no progress lines").arg(label);
            updateStatus();
        });
    }
    updateStatus();
}

CompareWindow::~CompareWindow() = default;

void CompareWindow::fillMetrics()
{
    // The metric the user chose stays; until they choose, the first (Loss when a run has it),
    // whichever run's progress came first.
    const QString current = m_metricChosen ? m_metric->currentText() : QString();
    const QSignalBlocker blocker(m_metric);
    m_metric->clear();
    m_metric->addItems(m_model->metrics());
    const int keep = m_metric->findText(current);
    m_metric->setCurrentIndex(keep >= 0 ? keep : 0);
    m_plot->setMetric(m_metric->currentText());
}

void CompareWindow::updateStatus()
{
    QStringList parts;
    if (m_waiting > 0) parts << tr("Reading %n archived driver log(s)…", nullptr, m_waiting);
    parts << m_missing;
    m_status->setText(parts.join(QStringLiteral("\n")));
    m_status->setVisible(!parts.isEmpty());
}

bool CompareWindow::exportCsv(const QString &path) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return false;
    file.write(m_model->toCsv().toUtf8());
    return file.commit();
}

bool CompareWindow::exportPng(const QString &path) const
{
    return m_plot->grab().save(path, "PNG");
}

} // namespace Starforge::Gui
