#pragma once

// The optional tray icon (off unless View › Show in System Tray is on; docs/jobs.md, "The tray
// icon"): the number of the user's active jobs on the icon and in its tooltip, a menu with each
// active job (a click opens it in the window), Show Starforge and Quit. While it is on, closing
// the window hides it and the app goes on following the jobs, so their logs are still archived
// when they end; Quit in the menu ends the app.

#include "core/job/jobrecord.h"

#include <QObject>
#include <QPointer>

class QMenu;
class QSystemTrayIcon;

namespace Starforge::Gui {

class JobsTray final : public QObject
{
    Q_OBJECT
public:
    explicit JobsTray(QObject *parent = nullptr);
    ~JobsTray() override;

    // On: the icon shows (where the desktop has a tray). Off: it is hidden.
    void setEnabled(bool enabled);
    bool isEnabled() const { return m_enabled; }
    // Whether closing the window should hide it: on, and a tray to come back from.
    bool keepsRunning() const;

    // The user's active jobs (Submitting, Pending, Running), newest first.
    void setActiveJobs(const QList<Job::JobRecord> &jobs);
    int activeCount() const { return int(m_jobs.size()); }
    QString toolTip() const;
    QMenu *menu() const { return m_menu; }

Q_SIGNALS:
    void jobRequested(const QString &jobId);
    void showRequested();
    void quitRequested();

private:
    void rebuild();

    bool m_enabled = false;
    QList<Job::JobRecord> m_jobs;
    QMenu *m_menu;
    QSystemTrayIcon *m_icon = nullptr;
};

} // namespace Starforge::Gui
