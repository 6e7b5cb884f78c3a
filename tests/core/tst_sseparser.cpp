// The SSE parser: vLLM's stream, every line ending and chunk split, multi-line data, comments,
// event types, ids, retry, and events without data.

#include "core/net/sseparser.h"

#include <QTest>

using Starforge::Net::SseEvent;
using Starforge::Net::SseParser;

class TestSseParser : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void vllmStreamInAnySplit()
    {
        const QByteArray stream = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
                                  "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
                                  "data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n"
                                  "data: [DONE]\n\n";
        // Every split point gives the same four events.
        for (qsizetype split = 0; split <= stream.size(); ++split) {
            SseParser parser;
            QList<SseEvent> events = parser.feed(stream.left(split));
            events += parser.feed(stream.mid(split));
            QCOMPARE(events.size(), 4);
            QCOMPARE(events.last().data, QStringLiteral("[DONE]"));
            QCOMPARE(events.at(1).data, QStringLiteral("{\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}"));
        }
        // Byte by byte.
        SseParser parser;
        QList<SseEvent> events;
        for (const char c : stream) events += parser.feed(QByteArray(1, c));
        QCOMPARE(events.size(), 4);
        QCOMPARE(parser.bufferedBytes(), 0);
    }

    void lineEndings()
    {
        for (const QByteArray &eol : {QByteArray("\n"), QByteArray("\r"), QByteArray("\r\n")}) {
            const QByteArray stream = "data: a" + eol + "data: b" + eol + eol + "data: c" + eol + eol;
            for (qsizetype split = 0; split <= stream.size(); ++split) {
                SseParser parser;
                QList<SseEvent> events = parser.feed(stream.left(split));
                events += parser.feed(stream.mid(split));
                QCOMPARE(events.size(), 2);
                QCOMPARE(events.first().data, QStringLiteral("a\nb"));
                QCOMPARE(events.last().data, QStringLiteral("c"));
            }
        }
    }

    void fields()
    {
        SseParser parser;
        const QList<SseEvent> events = parser.feed(": keep-alive\n\n"
                                                   "event: error\ndata:{\"error\":1}\nid: 7\nretry: 3000\n\n"
                                                   "event: nothing\n\n"
                                                   "data\n\n"
                                                   "data:  two spaces\nunknown: x\n\n");
        QCOMPARE(events.size(), 3);
        QCOMPARE(events.at(0).type, QStringLiteral("error"));
        QCOMPARE(events.at(0).data, QStringLiteral("{\"error\":1}")); // no space after the colon is fine
        QCOMPARE(events.at(0).id, QStringLiteral("7"));
        QCOMPARE(parser.retryMs(), std::optional<int>(3000));
        QCOMPARE(events.at(1).type, QStringLiteral("message")); // the type does not carry over
        QCOMPARE(events.at(1).data, QString());                 // "data" alone is an empty line of data
        QCOMPARE(events.at(2).data, QStringLiteral(" two spaces")); // only one space is stripped
        QCOMPARE(events.at(2).id, QStringLiteral("7"));              // the last id stays
    }

    void endlessInputIsBounded()
    {
        {
            // A line that never ends.
            SseParser parser(100);
            QCOMPARE(parser.feed("data: ok\n\n").size(), 1);
            QVERIFY(parser.feed("data: " + QByteArray(200, 'x')).isEmpty());
            QVERIFY(parser.failed());
            QCOMPARE(parser.bufferedBytes(), 0);
            QVERIFY(parser.feed("\n\ndata: late\n\n").isEmpty());   // nothing after the failure
        }
        {
            // An event that never ends: many short data lines without a blank line.
            SseParser parser(100);
            for (int i = 0; i < 30 && !parser.failed(); ++i) parser.feed("data: 0123456789\n");
            QVERIFY(parser.failed());
        }
        SseParser roomy;
        QCOMPARE(roomy.feed("data: " + QByteArray(100000, 'x') + "\n\n").size(), 1);
        QVERIFY(!roomy.failed());
    }
};

QTEST_APPLESS_MAIN(TestSseParser)
#include "tst_sseparser.moc"
