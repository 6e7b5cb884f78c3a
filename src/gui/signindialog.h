#pragma once

// What an exec credential plugin says while it signs in, for the person at the window. A
// device-code login (kubelogin, gke-gcloud-auth-plugin, aws sso) prints "open https://... and
// enter the code" on stderr and waits; kubectl users see that on their terminal, the GUI has
// none, so this dialog shows it live with the link clickable, lets the person type an answer to
// the plugin's stdin, and cancels the sign-in when closed.

#include <QDialog>
#include <QPointer>

class QLabel;
class QLineEdit;
class QPushButton;
class QTextBrowser;

namespace Starforge::Kube {
class ExecCredentialProvider;
}

namespace Starforge::Gui {

class SignInDialog final : public QDialog
{
    Q_OBJECT
public:
    explicit SignInDialog(Kube::ExecCredentialProvider *provider, QWidget *parent = nullptr);

    // The plugin's output so far, as plain text (tests, accessibility).
    QString transcript() const { return m_transcript; }

    // Shows the dialog for provider's interactive runs; returns at once.
    static void follow(Kube::ExecCredentialProvider *provider, QWidget *parent);

private:
    void append(const QString &text);
    void onFinished(const QString &error);

    QPointer<Kube::ExecCredentialProvider> m_provider;
    QLabel *m_heading;
    QTextBrowser *m_output;
    QLineEdit *m_answer;
    QPushButton *m_send;
    QPushButton *m_cancel;
    QString m_transcript;
    bool m_finished = false;
};

} // namespace Starforge::Gui
