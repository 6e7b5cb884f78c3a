#pragma once

// The profiles dialog's Test connection: one row per part of the connection (settings, API
// server, sign-in, KubeRay, each feature, the bucket), filled in as each answers, with an icon
// and a word for its outcome (never colour alone). The selected row's detail and fix (the Role
// rules an administrator would grant) are under the list, selectable; Copy report puts the whole
// result on the clipboard for a ticket to the cluster's administrators.

#include <QDialog>
#include <QProcessEnvironment>

class QLabel;
class QPushButton;
class QTreeWidget;

namespace Starforge {
class ConnectionTest;
struct SessionSource;
}
namespace Starforge::Secrets {
class SecretStore;
}

namespace Starforge::Gui {

class ConnectionTestDialog final : public QDialog
{
    Q_OBJECT
public:
    ConnectionTestDialog(Secrets::SecretStore *secrets, QProcessEnvironment environment, QWidget *parent = nullptr);
    ~ConnectionTestDialog() override;

    // Tests source, named for people ("profile lab"); a test already running is dropped.
    void start(const SessionSource &source, const QString &name);
    ConnectionTest *test() const { return m_test; }
    // The result as text: one line per part, then what to change.
    QString report() const;

private:
    void showCheck(int index);
    void showSelected();
    void onFinished();

    ConnectionTest *m_test;
    QString m_name;
    QTreeWidget *m_list;
    QLabel *m_heading;
    QLabel *m_detail;
    QLabel *m_summary;
    QPushButton *m_again;
    QPushButton *m_copy;
    std::function<void()> m_rerun;
};

} // namespace Starforge::Gui
