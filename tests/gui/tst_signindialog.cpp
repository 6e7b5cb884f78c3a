// An exec plugin that needs a person (a device-code login) talks on stderr; the window has no
// terminal, so its words reach a sign-in dialog as they come, the link clickable, an answer typed
// there reaches the plugin's stdin, and the dialog goes once the plugin has signed in.

#include "core/config/execplugin.h"
#include "core/kube/execcredentialprovider.h"
#include "gui/signindialog.h"
#include "support/testutil.h"

#include <QApplication>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>

using namespace Starforge;

namespace {
// Prints a device-code prompt, waits for a line on stdin, then answers with a token.
// An ordinary literal: moc misreads raw strings with braces in them.
const char *DeviceCodePlugin =
    "#!/bin/sh\n"
    "echo \"To sign in, open https://login.example/device?code=WXYZ-9876 and enter the code WXYZ-9876\" >&2\n"
    "read answer\n"
    "echo \"got: $answer\" >&2\n"
    "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"tok-%s\"}}\\n' \"$answer\"\n";
} // namespace

class TestSignInDialog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void deviceCodeLogin()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("device-login"));
        QVERIFY(Testing::writeFile(path, DeviceCodePlugin));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        Config::ExecPlugin plugin;
        plugin.apiVersion = QStringLiteral("client.authentication.k8s.io/v1");
        plugin.command = path;
        Kube::ExecCredentialProvider provider(plugin, {});
        provider.setPersonPresent(true);
        QWidget window;
        window.show();
        Gui::SignInDialog::follow(&provider, &window);

        std::optional<Result<Kube::ExecCredential>> got;
        QObject context;
        provider.get(&context, [&got](Result<Kube::ExecCredential> r) { got = r; });
        Gui::SignInDialog *dialog = nullptr;
        QVERIFY(QTest::qWaitFor([&] { return (dialog = window.findChild<Gui::SignInDialog *>()) != nullptr; }, 10000));
        QTRY_VERIFY(dialog->isVisible());
        QTRY_VERIFY(dialog->transcript().contains(QStringLiteral("WXYZ-9876")));
        auto *output = dialog->findChild<QTextBrowser *>(QStringLiteral("signInOutput"));
        QVERIFY(output->openExternalLinks());
        QVERIFY2(output->toHtml().contains(QStringLiteral("href=\"https://login.example/device?code=WXYZ-9876\"")), qPrintable(output->toHtml()));
        QVERIFY(!output->accessibleName().isEmpty());

        // The person answers; the plugin reads it and signs in; the dialog goes.
        auto *answer = dialog->findChild<QLineEdit *>(QStringLiteral("signInAnswer"));
        QVERIFY(!answer->accessibleName().isEmpty());
        QTest::keyClicks(answer, QStringLiteral("4242"));
        QTest::keyClick(answer, Qt::Key_Return);
        QVERIFY(QTest::qWaitFor([&] { return got.has_value(); }, 10000));
        QVERIFY(got->ok());
        QCOMPARE((*got)->token, QByteArray("tok-4242"));
        QTRY_VERIFY(!window.findChild<Gui::SignInDialog *>());
    }

    // Closing the dialog cancels the sign-in: the waiting request gets an error, nothing hangs.
    void cancelling()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("device-login"));
        QVERIFY(Testing::writeFile(path, DeviceCodePlugin));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner));
        Config::ExecPlugin plugin;
        plugin.apiVersion = QStringLiteral("client.authentication.k8s.io/v1");
        plugin.command = path;
        Kube::ExecCredentialProvider provider(plugin, {});
        provider.setPersonPresent(true);
        QWidget window;
        Gui::SignInDialog::follow(&provider, &window);
        std::optional<Result<Kube::ExecCredential>> got;
        QObject context;
        provider.get(&context, [&got](Result<Kube::ExecCredential> r) { got = r; });
        Gui::SignInDialog *dialog = nullptr;
        QVERIFY(QTest::qWaitFor([&] { return (dialog = window.findChild<Gui::SignInDialog *>()) != nullptr; }, 10000));
        dialog->findChild<QPushButton *>(QStringLiteral("signInCancel"))->click();
        QVERIFY(QTest::qWaitFor([&] { return got.has_value(); }, 10000));
        QVERIFY(!got->ok());
        QVERIFY2(got->error().message.contains(QStringLiteral("cancelled")), qPrintable(got->error().message));
        QVERIFY(!provider.isRunning());
    }
};

QTEST_MAIN(TestSignInDialog)
#include "tst_signindialog.moc"
