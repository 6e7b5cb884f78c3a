#pragma once

// What a first run offers in the middle of the window: three ways in, each a button with a
// sentence under it. Import a kubeconfig context (what most researchers already have), enter a
// server and a token, or try the embedded sandbox cluster (nothing to set up; it lives as long
// as the app). The window does the work; this panel only asks and shows progress.

#include <QWidget>

class QCommandLinkButton;
class QLabel;

namespace Starforge::Gui {

class FirstRunPanel final : public QWidget
{
    Q_OBJECT
public:
    explicit FirstRunPanel(QWidget *parent = nullptr);

    // While the sandbox starts: the buttons are off and the line says so; empty text: idle.
    void setBusy(const QString &text);
    // A way that failed says why under the buttons, which are on again.
    void showProblem(const QString &text);

Q_SIGNALS:
    void importRequested();
    void enterServerRequested();
    void sandboxRequested();

private:
    QCommandLinkButton *m_import;
    QCommandLinkButton *m_server;
    QCommandLinkButton *m_sandbox;
    QLabel *m_status;
};

} // namespace Starforge::Gui
