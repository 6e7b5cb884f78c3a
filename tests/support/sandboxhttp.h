#pragma once

// A plain HTTP client for tests of the sandbox itself: QNetworkAccessManager over real TLS with
// the sandbox's CA, the bearer token, and helpers to read a chunked watch line by line. (The
// app's own Kubernetes client is tested against the sandbox separately; these tests check the
// server's wire behaviour, so they stay at the HTTP level.)

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSignalSpy>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTest>
#include <QUrl>

#include <memory>

namespace Starforge::Testing {

struct HttpReply
{
    int status = 0;
    QByteArray body;
    QNetworkReply::NetworkError error = QNetworkReply::NoError;
    QHash<QByteArray, QByteArray> headers;

    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
    QString message() const { return json().value(QStringLiteral("message")).toString(); }
    QString reason() const { return json().value(QStringLiteral("reason")).toString(); }
};

class SandboxHttp
{
public:
    SandboxHttp(QUrl base, const QByteArray &caPem, QByteArray token)
        : m_base(std::move(base))
        , m_token(std::move(token))
    {
        m_ssl = QSslConfiguration::defaultConfiguration();
        m_ssl.setCaCertificates(QSslCertificate::fromData(caPem, QSsl::Pem));
    }

    QNetworkRequest request(const QString &pathAndQuery, const QByteArray &token) const
    {
        QNetworkRequest r(m_base.resolved(QUrl(pathAndQuery)));
        r.setSslConfiguration(m_ssl);
        if (!token.isEmpty()) {
            r.setRawHeader("Authorization", "Bearer " + token);
        }
        r.setRawHeader("Accept", "application/json");
        r.setTransferTimeout(30000);
        return r;
    }

    HttpReply send(const QByteArray &method, const QString &pathAndQuery, const QByteArray &body = {},
                   const QByteArray &contentType = "application/json", std::optional<QByteArray> token = std::nullopt)
    {
        QNetworkRequest r = request(pathAndQuery, token.value_or(m_token));
        if (!body.isEmpty()) {
            r.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
        }
        std::unique_ptr<QNetworkReply> reply(m_nam.sendCustomRequest(r, method, body));
        QSignalSpy finished(reply.get(), &QNetworkReply::finished);
        if (!reply->isFinished()) {
            finished.wait(30000);
        }
        HttpReply out;
        out.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        out.body = reply->readAll();
        out.error = reply->error();
        for (const auto &[name, value] : reply->rawHeaderPairs()) {
            out.headers.insert(name.toLower(), value);
        }
        return out;
    }

    HttpReply get(const QString &path, std::optional<QByteArray> token = std::nullopt)
    {
        return send("GET", path, {}, "application/json", std::move(token));
    }

    // An open stream (watch, follow); read lines with WatchReader.
    QNetworkReply *open(const QString &pathAndQuery)
    {
        return m_nam.get(request(pathAndQuery, m_token));
    }

    QNetworkAccessManager &nam() { return m_nam; }

private:
    QUrl m_base;
    QByteArray m_token;
    QSslConfiguration m_ssl;
    QNetworkAccessManager m_nam;
};

// Collects the JSON lines of a watch as they arrive.
class WatchReader
{
public:
    explicit WatchReader(QNetworkReply *reply) : m_reply(reply)
    {
        QObject::connect(reply, &QNetworkReply::readyRead, reply, [this] { read(); });
    }
    ~WatchReader() { m_reply->deleteLater(); }

    bool waitForEvents(qsizetype count, int timeoutMs = 10000)
    {
        return QTest::qWaitFor([&] { read(); return m_events.size() >= count; }, timeoutMs);
    }
    bool waitForEnd(int timeoutMs = 10000)
    {
        return QTest::qWaitFor([&] { read(); return m_reply->isFinished(); }, timeoutMs);
    }
    const QList<QJsonObject> &events() const { return m_events; }
    QStringList types() const
    {
        QStringList out;
        for (const QJsonObject &e : m_events) {
            out << e.value(QStringLiteral("type")).toString();
        }
        return out;
    }
    QNetworkReply *reply() const { return m_reply; }

private:
    void read()
    {
        m_buffer += m_reply->readAll();
        qsizetype nl;
        while ((nl = m_buffer.indexOf('\n')) >= 0) {
            const QByteArray line = m_buffer.left(nl);
            m_buffer.remove(0, nl + 1);
            if (!line.trimmed().isEmpty()) {
                m_events << QJsonDocument::fromJson(line).object();
            }
        }
    }
    QNetworkReply *m_reply;
    QByteArray m_buffer;
    QList<QJsonObject> m_events;
};

} // namespace Starforge::Testing
