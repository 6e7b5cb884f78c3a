#include "gui/firstrunpanel.h"

#include <QCommandLinkButton>
#include <QLabel>
#include <QVBoxLayout>

namespace Starforge::Gui {

FirstRunPanel::FirstRunPanel(QWidget *parent)
    : QWidget(parent)
    , m_import(new QCommandLinkButton(tr("&Import from kubeconfig"), tr("Use a context you already have with kubectl: its server, "
                                                                          "certificates and credentials."), this))
    , m_server(new QCommandLinkButton(tr("&Enter a server"), tr("Type the API server's URL and paste a token."), this))
    , m_sandbox(new QCommandLinkButton(tr("&Try the sandbox"), tr("A small cluster on this machine with GPU nodes, KubeRay and a "
                                                                    "bucket, to try everything first. It stops when the app quits."), this))
    , m_status(new QLabel(this))
{
    setObjectName(QStringLiteral("firstRunPanel"));
    m_import->setObjectName(QStringLiteral("importKubeconfigWay"));
    m_server->setObjectName(QStringLiteral("enterServerWay"));
    m_sandbox->setObjectName(QStringLiteral("trySandboxWay"));
    m_status->setObjectName(QStringLiteral("firstRunStatus"));
    m_status->setWordWrap(true);
    m_status->setAlignment(Qt::AlignCenter);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    for (QCommandLinkButton *button : {m_import, m_server, m_sandbox}) {
        // The description is what a screen reader says after the name.
        button->setAccessibleDescription(button->description());
        button->setMinimumWidth(440);
        layout->addWidget(button);
    }
    layout->addWidget(m_status);
    m_status->hide();
    connect(m_import, &QCommandLinkButton::clicked, this, &FirstRunPanel::importRequested);
    connect(m_server, &QCommandLinkButton::clicked, this, &FirstRunPanel::enterServerRequested);
    connect(m_sandbox, &QCommandLinkButton::clicked, this, &FirstRunPanel::sandboxRequested);
}

void FirstRunPanel::setBusy(const QString &text)
{
    for (QCommandLinkButton *button : {m_import, m_server, m_sandbox}) button->setEnabled(text.isEmpty());
    m_status->setStyleSheet(QString());
    m_status->setText(text);
    m_status->setVisible(!text.isEmpty());
}

void FirstRunPanel::showProblem(const QString &text)
{
    setBusy(QString());
    m_status->setText(text);
    m_status->setVisible(!text.isEmpty());
}

} // namespace Starforge::Gui
