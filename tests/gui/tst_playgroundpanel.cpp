// The Playground dock on the sandbox, from the main window as a person uses it: the launch form
// refuses what cannot run and launches what can; the pod appears with its countdown; a message
// streams its reply with its timings; Esc stops a long one; regenerate, edit and resend; two
// models side by side; export as Markdown and JSON; the conversation reopened from the
// history; a pod that cannot be scheduled explained under the table; Stop pod. The pods run the
// sandbox's vLLM stand-in (50 tokens/s), reached through the API server's pod proxy.

#include "core/config/embeddedsandbox.h"
#include "core/config/profilemanager.h"
#include "core/playground/playgroundpod.h"
#include "core/session/session.h"
#include "gui/jobs/jobdetailpanel.h"
#include "gui/mainwindow.h"
#include "gui/playground/chatpane.h"
#include "gui/playground/launchdialog.h"
#include "gui/playground/markdownview.h"
#include "gui/playground/playgroundpanel.h"
#include "gui/playground/transcriptview.h"
#include "models/playgroundpodsmodel.h"
#include "models/transcriptmodel.h"
#include "support/memorysecretstore.h"
#include "support/sandboxfixture.h"

#include <QAbstractButton>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include "scriptedprompts.h"

using namespace Starforge;
using Models::PlaygroundPodsModel;
using Models::TranscriptModel;

class TestPlaygroundPanel : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<Testing::SandboxHttp> m_http;
    Config::SandboxConnection m_connection;
    std::unique_ptr<Config::ProfileStore> m_store;
    Testing::MemorySecretStore m_secrets;
    std::unique_ptr<Config::ProfileManager> m_manager;
    Testing::ScriptedPrompts m_prompts;
    QProcessEnvironment m_environment;

    // Launches a model through the form, as a person fills it in; returns the new pod's name.
    static QString launchThroughTheForm(Gui::PlaygroundPanel *panel, const QString &model, const QString &series)
    {
        const int before = panel->podsModel()->rowCount();
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundLaunch")), Qt::LeftButton);
        Gui::LaunchDialog *dialog = panel->launchDialog();
        if (!dialog || !dialog->isVisible()) return {};
        dialog->modelEdit()->clear();
        QTest::keyClicks(dialog->modelEdit(), model);
        dialog->seriesCombo()->setCurrentText(series);
        const int index = dialog->seriesCombo()->findData(series);
        if (index >= 0) dialog->seriesCombo()->setCurrentIndex(index);
        auto *launch = dialog->findChild<QPushButton *>(QStringLiteral("launchButton"));
        if (!launch || !launch->isEnabled()) return {};
        QTest::mouseClick(launch, Qt::LeftButton);
        if (!QTest::qWaitFor([&] { return panel->podsModel()->rowCount() > before; }, 20000)) return {};
        return panel->podsModel()->instances().last().name;
    }

    static bool readyToChat(Gui::PlaygroundPanel *panel, const QString &pod)
    {
        const auto instance = panel->podsModel()->instance(pod);
        return instance && instance->ready;
    }

    static bool sendAndWait(Gui::PlaygroundPanel *panel, const QString &text, int panes = 1)
    {
        panel->promptEdit()->setFocus();
        QTest::keyClicks(panel->promptEdit(), text);
        QTest::keyClick(panel->promptEdit(), Qt::Key_Return, Qt::ControlModifier);
        return QTest::qWaitFor([&] {
            for (int p = 0; p < panes; ++p) {
                if (panel->pane(p)->isStreaming()) return false;
            }
            return true;
        }, 30000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = QStringLiteral("h100:2x8,cpu:1x0");
        options.tokenRate = 20;   // a natural reply (24 words) takes over a second: time to stop it
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
        auto connection = Config::SandboxConnection::read(options.connectionFile);
        QVERIFY2(connection, connection ? "" : qPrintable(connection.error().message));
        m_connection = *connection;
        m_store = std::make_unique<Config::ProfileStore>(m_dir.filePath(QStringLiteral("p.ini")));
        m_manager = std::make_unique<Config::ProfileManager>(m_store.get(), &m_secrets);
        const QString problem = Testing::useSandboxProfile(*m_store, *m_manager, m_connection, m_environment);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    void cleanupTestCase()
    {
        m_manager.reset();
        m_store.reset();
        m_http.reset();
        m_sandbox.reset();
    }

    void codeBlocksAreFound()
    {
        const auto blocks = TranscriptModel::codeBlocks(QStringLiteral("Run this:\n\n```python\nprint('hi')\nx = 1\n```\n\nand\n  ~~~~\nls -l\n~~~~~\n```bash\nopen"));
        QCOMPARE(blocks.size(), 3);
        QCOMPARE(blocks.at(0).language, QStringLiteral("python"));
        QCOMPARE(blocks.at(0).code, QStringLiteral("print('hi')\nx = 1"));
        QCOMPARE(blocks.at(1).language, QString());
        QCOMPARE(blocks.at(1).code, QStringLiteral("ls -l"));
        QCOMPARE(blocks.at(2).code, QStringLiteral("open"));   // still streaming: an open fence counts
        QVERIFY(TranscriptModel::codeBlocks(QStringLiteral("no code, ``inline`` only")).isEmpty());
    }

    void completeBlocksAreRenderedOnce()
    {
        using Gui::MarkdownView;
        QCOMPARE(MarkdownView::settledLength(u"one\n\ntwo"), 5);
        QCOMPARE(MarkdownView::settledLength(u"one\n\n"), 0);                        // nothing follows the blank line yet
        QCOMPARE(MarkdownView::settledLength(u"```\ncode\n\nmore"), 0);              // a blank line inside a fence
        QCOMPARE(MarkdownView::settledLength(u"```\ncode\n```\n\nafter"), 14);
        QCOMPARE(MarkdownView::settledLength(u"- a\n\n- b"), 0);                     // a list going on
        QCOMPARE(MarkdownView::settledLength(u"1. a\n\n2. b\n\nend"), 12);

        // Streamed token by token, the document reads as the whole text rendered at once.
        const QString text = QStringLiteral("GRPO in brief:\n\n- sample a group\n- score each\n\n```python\ndef a(r):\n\n    return r\n```\n\n"
                                            "| step | reward |\n|---|---|\n| 10 | 0.4 |\n\n1. first\n\n2. second\n\nThat is all, *really*.");
        MarkdownView streamed;
        QString sofar;
        for (const QString &token : text.split(u' ')) {
            sofar += (sofar.isEmpty() ? QString() : QStringLiteral(" ")) + token;
            streamed.setStreamingText(sofar);
        }
        streamed.setMarkdownText(text);
        MarkdownView whole;
        whole.setMarkdownText(text);
        QCOMPARE(streamed.toPlainText().simplified(), whole.toPlainText().simplified());
        QCOMPARE(streamed.markdownText(), text);
        QVERIFY(streamed.toPlainText().contains(QStringLiteral("That is all, really.")));   // the emphasis rendered, not shown as stars
    }

    void countdownText()
    {
        QCOMPARE(PlaygroundPodsModel::timeLeftText(0), QStringLiteral("expired"));
        QCOMPARE(PlaygroundPodsModel::timeLeftText(45), QStringLiteral("45 s"));
        QCOMPARE(PlaygroundPodsModel::timeLeftText(8 * 60 + 5), QStringLiteral("8 min"));
        QCOMPARE(PlaygroundPodsModel::timeLeftText(72 * 60), QStringLiteral("1 h 12 min"));
    }

    void launchChatCompareExportReopenStop()
    {
        Gui::MainWindow window(m_manager.get(), &m_prompts, m_environment);
        window.resize(1500, 1000);
        window.show();
        QTRY_VERIFY(window.session()->isUp());
        Gui::PlaygroundPanel *panel = window.playgroundPanel();
        QVERIFY(panel);
        panel->setConversationFolder(m_dir.filePath(QStringLiteral("conversations")));
        panel->setRefreshInterval(300);
        window.findChild<QAction *>(QStringLiteral("playgroundDockGoAction"))->trigger();
        QTRY_VERIFY(panel->isVisible());
        QAbstractItemModelTester podsTester(panel->podsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester transcriptTester(panel->pane(0)->transcript(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        // Every control has a name for a screen reader.
        for (QAbstractButton *button : panel->findChildren<QAbstractButton *>()) {
            if (qobject_cast<QTableView *>(button->parent())) continue;   // the table's corner, Qt's own
            QVERIFY2(!button->text().isEmpty() || !button->accessibleName().isEmpty(),
                     qPrintable(QStringLiteral("%1 in %2").arg(QString::fromLatin1(button->metaObject()->className()), button->parent()->objectName())));
        }
        // Nothing to talk to yet: Send says so instead of failing quietly.
        QTest::keyClicks(panel->promptEdit(), QStringLiteral("hello?"));
        QTest::keyClick(panel->promptEdit(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(panel->pane(0)->statusLabel()->isVisible());
        QVERIFY2(panel->pane(0)->statusLabel()->text().contains(QStringLiteral("Launch a model")), qPrintable(panel->pane(0)->statusLabel()->text()));
        QCOMPARE(panel->pane(0)->transcript()->rowCount(), 0);
        panel->promptEdit()->clear();

        // The form: a path outside the storage root is refused, field named, Launch off.
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundLaunch")), Qt::LeftButton);
        Gui::LaunchDialog *dialog = panel->launchDialog();
        QVERIFY(dialog && dialog->isVisible());
        auto *launchButton = dialog->findChild<QPushButton *>(QStringLiteral("launchButton"));
        QVERIFY(!launchButton->isEnabled());
        QVERIFY(dialog->problemsLabel()->text().contains(QStringLiteral("model: required")));
        QTest::keyClicks(dialog->modelEdit(), QStringLiteral("/etc/passwd"));
        QVERIFY2(dialog->problemsLabel()->text().contains(QStringLiteral("model: /etc/passwd is not under the storage root")), qPrintable(dialog->problemsLabel()->text()));
        QVERIFY(!launchButton->isEnabled());
        // The series offered are the cluster's, with what is free now.
        QTRY_VERIFY(dialog->seriesCombo()->findData(QStringLiteral("h100")) >= 0);
        QVERIFY2(dialog->seriesCombo()->itemText(dialog->seriesCombo()->findData(QStringLiteral("h100"))).contains(QStringLiteral("16 of 16 GPUs free")),
                 qPrintable(dialog->seriesCombo()->itemText(0)));
        dialog->reject();

        // A model that runs: the pod appears with its countdown, and becomes ready.
        const QString first = launchThroughTheForm(panel, QStringLiteral("Qwen/Qwen3-0.6B"), QStringLiteral("h100"));
        QVERIFY2(first.startsWith(QStringLiteral("play-")), qPrintable(first));
        const int firstRow = panel->podsModel()->rowOf(first);
        QCOMPARE(panel->podsModel()->index(firstRow, PlaygroundPodsModel::ModelColumn).data().toString(), QStringLiteral("Qwen3-0.6B"));
        QVERIFY2(panel->podsModel()->index(firstRow, PlaygroundPodsModel::TimeLeftColumn).data().toString().startsWith(QStringLiteral("1 h 59 min")),
                 qPrintable(panel->podsModel()->index(firstRow, PlaygroundPodsModel::TimeLeftColumn).data().toString()));
        QTRY_VERIFY_WITH_TIMEOUT(readyToChat(panel, first), 30000);
        QTRY_COMPARE(panel->pane(0)->pod(), first);   // the first ready pod is the one to talk to
        // vLLM listening: its metrics are read through the proxy and shown.
        QTRY_VERIFY_WITH_TIMEOUT(panel->pane(0)->metricsLabel()->text().contains(QStringLiteral("running")), 30000);

        // A message: the reply streams in (Stop on meanwhile) and ends with its timings.
        panel->maxTokensSpin()->setValue(24);
        panel->promptEdit()->setFocus();
        QTest::keyClicks(panel->promptEdit(), QStringLiteral("How does GRPO work?"));
        QTest::keyClick(panel->promptEdit(), Qt::Key_Return, Qt::ControlModifier);
        QVERIFY(panel->pane(0)->isStreaming());
        QVERIFY(panel->stopButton()->isEnabled());
        QVERIFY(!panel->sendButton()->isEnabled());
        QVERIFY(panel->promptEdit()->toPlainText().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!panel->pane(0)->isStreaming(), 30000);
        TranscriptModel *transcript = panel->pane(0)->transcript();
        QCOMPARE(transcript->rowCount(), 2);
        const QModelIndex reply = transcript->index(1);
        QVERIFY(!reply.data(TranscriptModel::ContentRole).toString().isEmpty());
        QCOMPARE(reply.data(TranscriptModel::FinishReasonRole).toString(), QStringLiteral("length"));
        QVERIFY2(reply.data(TranscriptModel::TimingsTextRole).toString().contains(QStringLiteral("first token after")), qPrintable(reply.data(TranscriptModel::TimingsTextRole).toString()));
        Gui::TranscriptView *view = panel->pane(0)->view();
        QCOMPARE(view->cardCount(), 2);
        QCOMPARE(view->card(1)->footerLabel()->text(), reply.data(TranscriptModel::TimingsTextRole).toString());
        QCOMPARE(view->card(1)->textView()->markdownText(), reply.data(TranscriptModel::ContentRole).toString());
        QCOMPARE(view->card(1)->textView()->toPlainText().simplified(), reply.data(TranscriptModel::ContentRole).toString().simplified());
        QVERIFY(view->card(1)->regenerateButton()->isVisibleTo(view));
        QVERIFY(!view->card(0)->regenerateButton()->isVisibleTo(view));
        QVERIFY(view->card(0)->editButton()->isVisibleTo(view));
        // Streaming did not render once per token: 24 tokens at 50/s take about half a second.
        QVERIFY2(view->renders() < 2 + 24, qPrintable(QString::number(view->renders())));
        // Copy takes the reply's Markdown as it is.
        QTest::mouseClick(view->card(1)->copyButton(), Qt::LeftButton);
        QCOMPARE(QApplication::clipboard()->text(), reply.data(TranscriptModel::ContentRole).toString());

        // A long reply stopped with Esc: what came is kept, marked stopped.
        panel->maxTokensSpin()->setValue(2000);
        QTest::keyClicks(panel->promptEdit(), QStringLiteral("Now write a long essay."));
        QTest::keyClick(panel->promptEdit(), Qt::Key_Return, Qt::ControlModifier);
        QTRY_VERIFY_WITH_TIMEOUT(!transcript->index(3).data(TranscriptModel::ContentRole).toString().isEmpty(), 20000);
        QTest::keyClick(panel->promptEdit(), Qt::Key_Escape);
        QTRY_VERIFY(!panel->pane(0)->isStreaming());
        QCOMPARE(transcript->index(3).data(TranscriptModel::FinishReasonRole).toString(), QStringLiteral("abort"));
        QVERIFY(transcript->index(3).data(TranscriptModel::TimingsTextRole).toString().contains(QStringLiteral("stopped")));

        // Regenerate: the last reply asked for again, in its place.
        panel->maxTokensSpin()->setValue(8);
        QVERIFY(panel->findChild<QPushButton *>(QStringLiteral("playgroundRegenerate"))->isEnabled());
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundRegenerate")), Qt::LeftButton);
        QVERIFY(panel->pane(0)->isStreaming());
        QTRY_VERIFY_WITH_TIMEOUT(!panel->pane(0)->isStreaming(), 30000);
        QCOMPARE(transcript->rowCount(), 4);
        QCOMPARE(transcript->index(3).data(TranscriptModel::FinishReasonRole).toString(), QStringLiteral("length"));

        // Edit the first message: what followed goes, the conversation continues from there.
        m_prompts.answers = {QStringLiteral("How does PPO work?")};
        QTest::mouseClick(view->card(0)->editButton(), Qt::LeftButton);
        QCOMPARE(transcript->index(0).data(TranscriptModel::ContentRole).toString(), QStringLiteral("How does PPO work?"));
        QTRY_VERIFY_WITH_TIMEOUT(!panel->pane(0)->isStreaming(), 30000);
        QCOMPARE(transcript->rowCount(), 2);
        QCOMPARE(view->cardCount(), 2);

        // Export: Markdown and JSON with the model, the settings and the timings.
        const QString markdown = m_dir.filePath(QStringLiteral("conversation.md"));
        m_prompts.answers = {markdown};
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundExport")), Qt::LeftButton);
        QFile md(markdown);
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QString exported = QString::fromUtf8(md.readAll());
        QVERIFY2(exported.contains(QStringLiteral("Model: `Qwen3-0.6B` (pod `%1`)").arg(first)), qPrintable(exported));
        QVERIFY(exported.contains(QStringLiteral("How does PPO work?")));
        QVERIFY(exported.contains(QStringLiteral("first token after")));
        QVERIFY(panel->exportConversation(m_dir.filePath(QStringLiteral("conversation.json"))));
        QFile json(m_dir.filePath(QStringLiteral("conversation.json")));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonObject saved = QJsonDocument::fromJson(json.readAll()).object();
        QCOMPARE(saved.value(QStringLiteral("model")).toString(), QStringLiteral("Qwen3-0.6B"));
        QCOMPARE(saved.value(QStringLiteral("messages")).toArray().size(), 2);
        QCOMPARE(saved.value(QStringLiteral("settings")).toObject().value(QStringLiteral("maxTokens")).toInt(), 8);

        // Two models side by side: the same prompt to both.
        const QString second = launchThroughTheForm(panel, QStringLiteral("Qwen/Qwen2.5-1.5B-Instruct"), QStringLiteral("h100"));
        QVERIFY2(second.startsWith(QStringLiteral("play-")), qPrintable(second));
        QTRY_VERIFY_WITH_TIMEOUT(readyToChat(panel, second), 30000);
        QTest::mouseClick(panel->compareCheck(), Qt::LeftButton);
        QVERIFY(panel->pane(1)->isVisible());
        QCOMPARE(panel->pane(1)->pod(), second);
        QAbstractItemModelTester secondTester(panel->pane(1)->transcript(), QAbstractItemModelTester::FailureReportingMode::QtTest);
        // vLLM in the second pod may still be starting: wait for it to answer /metrics.
        QTRY_VERIFY_WITH_TIMEOUT(panel->pane(1)->metricsLabel()->text().contains(QStringLiteral("running")), 30000);
        QVERIFY(sendAndWait(panel, QStringLiteral("Which is better?"), 2));
        QCOMPARE(transcript->rowCount(), 4);
        QCOMPARE(panel->pane(1)->transcript()->rowCount(), 2);
        QCOMPARE(panel->pane(1)->transcript()->context().model, QStringLiteral("Qwen2.5-1.5B-Instruct"));
        QVERIFY(!panel->pane(1)->transcript()->index(1).data(TranscriptModel::ContentRole).toString().isEmpty());
        QTest::mouseClick(panel->compareCheck(), Qt::LeftButton);
        QVERIFY(!panel->pane(1)->isVisible());

        // The conversation is kept on this machine: New, then reopened from the history.
        const QString id = panel->pane(0)->conversationId();
        QVERIFY(!id.isEmpty());
        QVERIFY(panel->historyCombo()->findData(id) >= 0);
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundNew")), Qt::LeftButton);
        QCOMPARE(transcript->rowCount(), 0);
        QCOMPARE(view->cardCount(), 0);
        panel->historyCombo()->setFocus();
        panel->historyCombo()->setCurrentIndex(panel->historyCombo()->findData(id));
        Q_EMIT panel->historyCombo()->activated(panel->historyCombo()->findData(id));
        QCOMPARE(transcript->rowCount(), 4);
        QCOMPARE(view->cardCount(), 4);
        QCOMPARE(panel->pane(0)->pod(), first);
        QVERIFY(!transcript->index(1).data(TranscriptModel::TimingsTextRole).toString().isEmpty());

        // Extend: the same model again on a new pod, and the form says why it is a new pod.
        panel->podsView()->setCurrentIndex(panel->podsModel()->index(panel->podsModel()->rowOf(first), 0));
        QVERIFY(panel->findChild<QPushButton *>(QStringLiteral("playgroundExtend"))->isEnabled());
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundExtend")), Qt::LeftButton);
        Gui::LaunchDialog *extend = panel->launchDialog();
        QVERIFY(extend && extend->isVisible());
        QVERIFY2(extend->noteLabel()->text().contains(QStringLiteral("only go down")), qPrintable(extend->noteLabel()->text()));
        QCOMPARE(extend->request().model, QStringLiteral("Qwen/Qwen3-0.6B"));
        QCOMPARE(extend->request().series, QStringLiteral("h100"));
        QCOMPARE(extend->request().ttlSeconds, 2 * 3600);
        QVERIFY(extend->problems().isEmpty());
        extend->reject();

        // A series nobody has: the pod waits, and the banner says why.
        const QString stuck = launchThroughTheForm(panel, QStringLiteral("Qwen/Qwen3-0.6B"), QStringLiteral("a100"));
        QVERIFY2(stuck.startsWith(QStringLiteral("play-")), qPrintable(stuck));
        panel->podsView()->setCurrentIndex(panel->podsModel()->index(panel->podsModel()->rowOf(stuck), 0));
        QTRY_VERIFY_WITH_TIMEOUT(panel->podBanner()->isVisible() && panel->podBanner()->text().contains(QStringLiteral("a100")), 30000);
        QVERIFY2(panel->podBanner()->text().startsWith(stuck), qPrintable(panel->podBanner()->text()));

        // Stop pod: confirmed, deleted, gone from the table; the others stay.
        m_prompts.answers = {true};
        QTest::mouseClick(panel->findChild<QPushButton *>(QStringLiteral("playgroundStopPod")), Qt::LeftButton);
        QVERIFY(m_prompts.asked.last().contains(stuck));
        QTRY_VERIFY_WITH_TIMEOUT(panel->podsModel()->rowOf(stuck) < 0, 20000);
        QVERIFY(panel->podsModel()->rowOf(first) >= 0);
        QVERIFY(panel->podsModel()->rowOf(second) >= 0);

        // A pod with four minutes left: the panel says so once (the window turns it into a
        // desktop notification), and its countdown is in the amber range.
        QSignalSpy expiring(panel, &Gui::PlaygroundPanel::podExpiringSoon);
        Playground::LaunchRequest shortLived;
        shortLived.model = QStringLiteral("Qwen/Qwen3-0.6B");
        shortLived.series = QStringLiteral("h100");
        const QDateTime now = QDateTime::currentDateTimeUtc();
        QJsonObject pod = *Playground::PlaygroundPod::build(shortLived, window.session()->settings(), QStringLiteral("zz2456"), now);
        QJsonObject meta = pod.value(QStringLiteral("metadata")).toObject();
        QJsonObject annotations = meta.value(QStringLiteral("annotations")).toObject();
        annotations.insert(QStringLiteral("starforge.dev/expires-at"), now.addSecs(4 * 60).toString(Qt::ISODate));
        meta.insert(QStringLiteral("annotations"), annotations);
        pod.insert(QStringLiteral("metadata"), meta);
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), QJsonDocument(pod).toJson()).status, 201);
        QTRY_COMPARE_WITH_TIMEOUT(expiring.size(), 1, 10000);
        QCOMPARE(expiring.first().at(0).toString(), QStringLiteral("play-zz2456"));
        QVERIFY(expiring.first().at(2).toLongLong() <= 240);
        QVERIFY(panel->podsModel()->index(panel->podsModel()->rowOf(QStringLiteral("play-zz2456")), 0).data(PlaygroundPodsModel::SoonRole).toBool());
        QTest::qWait(1000);   // more lists: still once
        QCOMPARE(expiring.size(), 1);
    }
};

QTEST_MAIN(TestPlaygroundPanel)
#include "tst_playgroundpanel.moc"
