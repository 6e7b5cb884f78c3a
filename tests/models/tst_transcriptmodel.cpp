// A playground conversation as a list model, under QAbstractItemModelTester throughout: a reply
// streams into its own row (dataChanged on that row only), closes with its timings, and the
// next request is the conversation as shown; editing a message drops what followed, regenerate
// drops the last reply; the export carries the model, pod, settings and timings.

#include "models/transcriptmodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QSignalSpy>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Models;

namespace {

Playground::ChatReply finished(const QString &text, const QString &reason = QStringLiteral("stop"))
{
    Playground::ChatReply r;
    r.content = text;
    r.finishReason = reason;
    r.completionTokens = 11;
    r.firstTokenMs = 40;
    r.totalMs = 240;   // ten tokens after the first in 200 ms: 50 tokens/s
    return r;
}

} // namespace

class TestTranscriptModel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void streamsAReplyIntoItsRow()
    {
        TranscriptModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendUser(QStringLiteral("How does **GRPO** work?"));
        const int row = model.beginReply();
        QCOMPARE(row, 1);
        QVERIFY(model.isStreaming());
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.appendDelta(QStringLiteral("It samples "));
        model.appendDelta(QString());   // an empty delta changes nothing
        model.appendDelta(QStringLiteral("a group."));
        QCOMPARE(changed.size(), 2);
        for (const auto &args : changed) {
            QCOMPARE(args.at(0).toModelIndex().row(), 1);
            QCOMPARE(args.at(1).toModelIndex().row(), 1);
        }
        QCOMPARE(model.index(1).data(TranscriptModel::ContentRole).toString(), QStringLiteral("It samples a group."));
        QVERIFY(model.index(1).data(Qt::AccessibleTextRole).toString().endsWith(QStringLiteral("(still writing)")));
        // Not sent while it streams.
        QCOMPARE(model.messages().size(), 1);
        model.finishReply(finished(QStringLiteral("It samples a group.")));
        QVERIFY(!model.isStreaming());
        QCOMPARE(model.index(1).data(TranscriptModel::TimingsTextRole).toString(),
                 QStringLiteral("first token after 40 ms · 50.0 tokens/s · 11 token(s)"));
        QCOMPARE(model.messages(), (QList<Playground::ChatMessage>{{QStringLiteral("user"), QStringLiteral("How does **GRPO** work?")},
                                                                   {QStringLiteral("assistant"), QStringLiteral("It samples a group.")}}));
    }

    void editAndRegenerate()
    {
        TranscriptModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.appendUser(QStringLiteral("one"));
        model.beginReply();
        model.finishReply(finished(QStringLiteral("first")));
        model.appendUser(QStringLiteral("two"));
        model.beginReply();
        QVERIFY(!model.dropLastReply());   // not while it streams
        QVERIFY(!model.editMessage(0, QStringLiteral("x")));
        model.finishReply(finished(QStringLiteral("second"), QStringLiteral("length")));
        QVERIFY(model.index(3).data(TranscriptModel::TimingsTextRole).toString().endsWith(QStringLiteral("cut at max tokens")));
        // Regenerate: the last reply goes, the question stays.
        QVERIFY(model.dropLastReply());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.messages().last().content, QStringLiteral("two"));
        // Edit the first question: what followed goes.
        QVERIFY(model.editMessage(0, QStringLiteral("one, again")));
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.messages(), (QList<Playground::ChatMessage>{{QStringLiteral("user"), QStringLiteral("one, again")}}));
        QVERIFY(!model.editMessage(5, QStringLiteral("nowhere")));
        // A failed reply is shown, not sent again.
        model.beginReply();
        Playground::ChatReply failed;
        failed.error = Error::unavailable(QStringLiteral("vLLM stopped the reply: boom"));
        model.finishReply(failed);
        QCOMPARE(model.index(1).data(TranscriptModel::ErrorRole).toString(), QStringLiteral("vLLM stopped the reply: boom"));
        QCOMPARE(model.messages().size(), 1);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
    }

    void exportsWhatProducedIt()
    {
        TranscriptModel model;
        Playground::ChatSettings settings;
        settings.system = QStringLiteral("Be brief.");
        settings.temperature = 0.2;
        settings.maxTokens = 64;
        model.setContext({QStringLiteral("play-b7d4kq"), QStringLiteral("x7k2pq-step-40"), settings});
        model.appendUser(QStringLiteral("Hi"));
        model.beginReply();
        model.finishReply(finished(QStringLiteral("Hello, *world*.")));
        const QString markdown = model.toMarkdown();
        QVERIFY2(markdown.contains(QStringLiteral("- Model: `x7k2pq-step-40` (pod `play-b7d4kq`)")), qPrintable(markdown));
        QVERIFY(markdown.contains(QStringLiteral("temperature 0.2, top-p 1, max tokens 64")));
        QVERIFY(markdown.contains(QStringLiteral("- System prompt: Be brief.")));
        QVERIFY(markdown.contains(QStringLiteral("## You\n\nHi\n")));
        QVERIFY(markdown.contains(QStringLiteral("## x7k2pq-step-40\n\nHello, *world*.\n\n*first token after 40 ms")));
        const QJsonObject json = model.toJson();
        QCOMPARE(json.value(QStringLiteral("pod")).toString(), QStringLiteral("play-b7d4kq"));
        QCOMPARE(json[QStringLiteral("settings")][QStringLiteral("maxTokens")].toInt(), 64);
        const QJsonObject reply = json.value(QStringLiteral("messages")).toArray().at(1).toObject();
        QCOMPARE(reply.value(QStringLiteral("firstTokenMs")).toInt(), 40);
        QCOMPARE(reply.value(QStringLiteral("tokensPerSecond")).toDouble(), 50.0);
        QCOMPARE(reply.value(QStringLiteral("finishReason")).toString(), QStringLiteral("stop"));

        // Reopened from its JSON: the same conversation, timings and context.
        TranscriptModel reopened;
        QAbstractItemModelTester tester(&reopened, QAbstractItemModelTester::FailureReportingMode::QtTest);
        reopened.loadJson(json);
        QCOMPARE(reopened.rowCount(), 2);
        QCOMPARE(reopened.messages(), model.messages());
        QCOMPARE(reopened.index(1).data(TranscriptModel::TimingsTextRole), model.index(1).data(TranscriptModel::TimingsTextRole));
        QCOMPARE(reopened.context().settings.system, QStringLiteral("Be brief."));
        QCOMPARE(reopened.toJson(), json);
    }
};

QTEST_GUILESS_MAIN(TestTranscriptModel)
#include "tst_transcriptmodel.moc"
