#include "gui/signindialog.h"

#include "core/kube/execcredentialprovider.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace Starforge::Gui {

namespace {

// Plain text as HTML with every http(s) URL a link.
QString linkified(const QString &text)
{
    static const QRegularExpression url(QStringLiteral(R"((https?://[^\s<>"']+[^\s<>"'.,;:)\]]))"));
    QString html;
    qsizetype last = 0;
    auto it = url.globalMatch(text);
    while (it.hasNext()) {
        const auto match = it.next();
        html += text.mid(last, match.capturedStart() - last).toHtmlEscaped();
        const QString link = match.captured(1);
        html += QStringLiteral("<a href=\"%1\">%2</a>").arg(link.toHtmlEscaped(), link.toHtmlEscaped());
        last = match.capturedEnd();
    }
    html += text.mid(last).toHtmlEscaped();
    return html.replace(QLatin1Char('\n'), QStringLiteral("<br>"));
}

} // namespace

SignInDialog::SignInDialog(Kube::ExecCredentialProvider *provider, QWidget *parent)
    : QDialog(parent)
    , m_provider(provider)
    , m_heading(new QLabel(this))
    , m_output(new QTextBrowser(this))
    , m_answer(new QLineEdit(this))
    , m_send(new QPushButton(tr("&Send"), this))
    , m_cancel(new QPushButton(tr("&Cancel sign-in"), this))
{
    setObjectName(QStringLiteral("signInDialog"));
    setWindowTitle(tr("Sign in to the cluster"));
    setAccessibleName(tr("Sign in to the cluster"));
    m_heading->setObjectName(QStringLiteral("signInHeading"));
    m_heading->setWordWrap(true);
    m_heading->setText(tr("<b>%1</b> is signing you in. Follow what it says below; the window goes on once it is done.")
                           .arg(provider->plugin().command.section(QLatin1Char('/'), -1).toHtmlEscaped()));
    m_output->setObjectName(QStringLiteral("signInOutput"));
    m_output->setAccessibleName(tr("What the sign-in program says"));
    m_output->setOpenExternalLinks(true);
    m_output->setMinimumSize(520, 180);
    m_answer->setObjectName(QStringLiteral("signInAnswer"));
    m_answer->setAccessibleName(tr("Answer to the sign-in program"));
    m_answer->setPlaceholderText(tr("Type an answer if it asks for one, then Send"));
    m_send->setObjectName(QStringLiteral("signInSend"));
    m_cancel->setObjectName(QStringLiteral("signInCancel"));
    auto *answerRow = new QHBoxLayout;
    answerRow->addWidget(m_answer, 1);
    answerRow->addWidget(m_send);
    auto *buttons = new QDialogButtonBox(this);
    buttons->addButton(m_cancel, QDialogButtonBox::RejectRole);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_heading);
    layout->addWidget(m_output, 1);
    layout->addLayout(answerRow);
    layout->addWidget(buttons);
    auto send = [this] {
        if (m_provider && !m_answer->text().isEmpty()) {
            m_provider->writeToPlugin(m_answer->text().toUtf8());
            append(QStringLiteral("> %1\n").arg(m_answer->text()));
            m_answer->clear();
        }
    };
    connect(m_send, &QPushButton::clicked, this, send);
    connect(m_answer, &QLineEdit::returnPressed, this, send);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(this, &QDialog::rejected, this, [this] {
        if (m_provider && !m_finished) m_provider->cancel();
    });
    connect(provider, &Kube::ExecCredentialProvider::output, this, &SignInDialog::append);
    connect(provider, &Kube::ExecCredentialProvider::runFinished, this, &SignInDialog::onFinished);
}

void SignInDialog::append(const QString &text)
{
    m_transcript += text;
    m_output->setHtml(linkified(m_transcript));
    m_output->moveCursor(QTextCursor::End);
}

void SignInDialog::onFinished(const QString &error)
{
    m_finished = true;
    if (error.isEmpty()) {
        accept();
        deleteLater();
        return;
    }
    // Failed: the dialog stays with what the plugin said; the status bar has the error too.
    m_heading->setText(tr("Signing in failed: %1").arg(error.toHtmlEscaped()));
    m_answer->setEnabled(false);
    m_send->setEnabled(false);
    m_cancel->setText(tr("&Close"));
}

void SignInDialog::follow(Kube::ExecCredentialProvider *provider, QWidget *parent)
{
    // The dialog opens with the first words of an interactive run: a plugin that signs in
    // silently (a cached token) never shows one.
    QObject::connect(provider, &Kube::ExecCredentialProvider::output, parent, [provider, parent](const QString &text) {
        if (provider->findChild<QObject *>(QStringLiteral("signInMarker"))) return;
        auto *marker = new QObject(provider);
        marker->setObjectName(QStringLiteral("signInMarker"));
        auto *dialog = new SignInDialog(provider, parent);
        QObject::connect(dialog, &QObject::destroyed, marker, &QObject::deleteLater);
        QObject::connect(dialog, &QDialog::finished, dialog, &QObject::deleteLater);
        dialog->append(text);
        dialog->show();
    });
}

} // namespace Starforge::Gui
