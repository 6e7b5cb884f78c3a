#include "gui/notify/jobstray.h"

#include <QApplication>
#include <QMenu>
#include <QPainter>
#include <QSystemTrayIcon>

namespace Starforge::Gui {

namespace {

// The app's icon with the count in a badge, bottom right.
QIcon iconWithCount(int count)
{
    const QIcon base = QApplication::windowIcon();
    QPixmap pixmap = base.pixmap(64, 64);
    if (pixmap.isNull()) {
        pixmap = QPixmap(64, 64);
        pixmap.fill(Qt::transparent);
    }
    if (count > 0) {
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        const QRectF badge(30, 30, 34, 34);
        painter.setBrush(QColor(0xd5, 0x5e, 0x00));
        painter.setPen(Qt::NoPen);
        painter.drawEllipse(badge);
        QFont font = painter.font();
        font.setPixelSize(count > 9 ? 16 : 22);
        font.setBold(true);
        painter.setFont(font);
        painter.setPen(Qt::white);
        painter.drawText(badge, Qt::AlignCenter, count > 99 ? QStringLiteral("99+") : QString::number(count));
    }
    return QIcon(pixmap);
}

} // namespace

JobsTray::JobsTray(QObject *parent) : QObject(parent), m_menu(new QMenu)
{
    m_menu->setObjectName(QStringLiteral("trayMenu"));
    rebuild();
}

JobsTray::~JobsTray()
{
    delete m_menu;
}

void JobsTray::setEnabled(bool enabled)
{
    m_enabled = enabled;
    if (enabled && !m_icon && QSystemTrayIcon::isSystemTrayAvailable()) {
        m_icon = new QSystemTrayIcon(this);
        m_icon->setContextMenu(m_menu);
        connect(m_icon, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason reason) {
            if (reason == QSystemTrayIcon::Trigger || reason == QSystemTrayIcon::DoubleClick) Q_EMIT showRequested();
        });
    }
    rebuild();
    if (m_icon) m_icon->setVisible(enabled);
}

bool JobsTray::keepsRunning() const
{
    return m_enabled && m_icon && QSystemTrayIcon::isSystemTrayAvailable();
}

void JobsTray::setActiveJobs(const QList<Job::JobRecord> &jobs)
{
    m_jobs = jobs;
    rebuild();
}

QString JobsTray::toolTip() const
{
    return m_jobs.isEmpty() ? tr("Starforge: no active jobs") : tr("Starforge: %n active job(s)", nullptr, int(m_jobs.size()));
}

void JobsTray::rebuild()
{
    m_menu->clear();
    if (m_jobs.isEmpty()) {
        m_menu->addAction(tr("No active jobs"))->setEnabled(false);
    }
    for (const Job::JobRecord &job : std::as_const(m_jobs)) {
        const QString name = job.rayJobName.isEmpty() ? job.id : job.rayJobName;
        QAction *open = m_menu->addAction(tr("%1 — %2").arg(name, Job::jobStateName(job.state)));
        connect(open, &QAction::triggered, this, [this, id = job.id] { Q_EMIT jobRequested(id); });
    }
    m_menu->addSeparator();
    connect(m_menu->addAction(tr("&Show Starforge")), &QAction::triggered, this, &JobsTray::showRequested);
    connect(m_menu->addAction(tr("&Quit")), &QAction::triggered, this, &JobsTray::quitRequested);
    if (m_icon) {
        m_icon->setIcon(iconWithCount(int(m_jobs.size())));
        m_icon->setToolTip(toolTip());
    }
}

} // namespace Starforge::Gui
