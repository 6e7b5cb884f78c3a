// The sandbox's API server over real TLS sockets, in-process: authentication, RBAC, discovery,
// list paging, watches (replay, selectors, bookmarks, timeouts, 410), CRUD with Status errors,
// garbage collection, faults, and the connection file.

#include "sandbox/sandbox.h"
#include "sandbox/store/objectstore.h"
#include "support/sandboxfixture.h"
#include "support/sandboxjobs.h"
#include "support/testutil.h"

#include <QFile>
#include <QJsonArray>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using namespace Starforge::Testing;

namespace {

// Pods name a scheduler that does not exist, so the default scheduler leaves them alone (as on a
// real cluster) and watches see only the test's own changes.
QByteArray podJson(const QString &name, const QString &labels = QStringLiteral("{\"app\":\"web\"}"))
{
    return QStringLiteral(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"%1","labels":%2},)"
                          R"("spec":{"schedulerName":"test-none","containers":[{"name":"main","image":"busybox"}]}})").arg(name, labels).toUtf8();
}

} // namespace

class TestSandboxApi : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Sandbox::Sandbox> m_sandbox;
    std::unique_ptr<SandboxHttp> m_http;

    void restartSandbox(const QString &fleet = QStringLiteral("h200:3x8,cpu:1x0"), int bookmarkMs = 60000)
    {
        m_http.reset();
        Sandbox::SandboxOptions options;
        options.connectionFile = m_dir.filePath(QStringLiteral("conn.json"));
        options.fleet = fleet;
        options.bookmarkIntervalMs = bookmarkMs;
        const QString rbac = m_dir.filePath(QStringLiteral("rbac.json"));
        QVERIFY(writeFile(rbac, R"({"users":[{"name":"viewer","token":"viewer-token","rules":[
            {"apiGroups":[""],"resources":["pods","pods/log"],"verbs":["get","list","watch"],"namespaces":["starforge"]},
            {"apiGroups":[""],"resources":["nodes"],"verbs":["list"]}]}]})"));
        options.rbacFile = rbac;
        QString error;
        QVERIFY2(Testing::startSandbox(m_sandbox, m_http, options, &error), qPrintable(error));
    }

private Q_SLOTS:
    void init() { restartSandbox(); }
    void cleanup()
    {
        m_http.reset();
        m_sandbox.reset();
    }

    void connectionFileDescribesTheSandbox()
    {
        const QJsonObject conn = QJsonDocument::fromJson(readAll(m_dir.filePath(QStringLiteral("conn.json")))).object();
        QCOMPARE(conn.value(QStringLiteral("apiServer")).toString(), m_sandbox->apiServerUrl().toString());
        QVERIFY(conn.value(QStringLiteral("apiServer")).toString().startsWith(QStringLiteral("https://127.0.0.1:")));
        QCOMPARE(conn.value(QStringLiteral("token")).toString().toLatin1(), m_sandbox->token());
        QCOMPARE(readAll(conn.value(QStringLiteral("caFile")).toString()), m_sandbox->caCertificatePem());
        const QJsonObject forge = conn.value(QStringLiteral("forge")).toObject();
        QCOMPARE(forge.value(QStringLiteral("FORGE_K8S_NAMESPACE")).toString(), QStringLiteral("starforge"));
        QCOMPARE(forge.value(QStringLiteral("FORGE_K8S_CA_FILE")).toString(), conn.value(QStringLiteral("caFile")).toString());
        QCOMPARE(conn.value(QStringLiteral("privateRegistry")).toString(), QStringLiteral("registry.sandbox.internal/private/"));
        // Owner-only: the file carries the token.
        QCOMPARE(QFile::permissions(m_dir.filePath(QStringLiteral("conn.json"))) & (QFile::ReadOther | QFile::ReadGroup),
                 QFileDevice::Permissions());
        m_sandbox->stop();
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("conn.json"))));
    }

    void onlyLoopback()
    {
        Sandbox::Sandbox other;
        Sandbox::SandboxOptions options;
        options.address = QHostAddress(QStringLiteral("0.0.0.0"));
        options.connectionFile = m_dir.filePath(QStringLiteral("other.json"));
        const auto started = other.start(options);
        QVERIFY(!started.ok());
        QVERIFY(started.error().message.contains(QStringLiteral("loopback")));
    }

    void tlsIsVerifiedAgainstTheSandboxCa()
    {
        // Without the CA the TLS handshake fails; with it (the default here) requests work.
        SandboxHttp untrusted(m_sandbox->apiServerUrl(), QByteArray(), m_sandbox->token());
        const HttpReply refused = untrusted.get(QStringLiteral("/version"));
        QCOMPARE(refused.error, QNetworkReply::SslHandshakeFailedError);
        QCOMPARE(m_http->get(QStringLiteral("/version")).status, 200);
    }

    void authentication()
    {
        const HttpReply version = m_http->get(QStringLiteral("/version"), QByteArray());
        QCOMPARE(version.status, 200);
        QCOMPARE(version.json().value(QStringLiteral("minor")).toString(), QStringLiteral("32"));
        for (const QByteArray &token : {QByteArray(), QByteArray("wrong")}) {
            const HttpReply r = m_http->get(QStringLiteral("/api/v1/nodes"), token);
            QCOMPARE(r.status, 401);
            QCOMPARE(r.json().value(QStringLiteral("kind")).toString(), QStringLiteral("Status"));
            QCOMPARE(r.reason(), QStringLiteral("Unauthorized"));
            QCOMPARE(r.message(), QStringLiteral("Unauthorized"));
        }
        QCOMPARE(m_http->get(QStringLiteral("/version"), QByteArray("wrong")).status, 401);
    }

    void rbacDeniesWithTheRealText()
    {
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods"), QByteArray("viewer-token")).status, 200);
        const HttpReply other = m_http->get(QStringLiteral("/api/v1/namespaces/default/pods"), QByteArray("viewer-token"));
        QCOMPARE(other.status, 403);
        QCOMPARE(other.reason(), QStringLiteral("Forbidden"));
        QCOMPARE(other.message(), QStringLiteral("pods is forbidden: User \"viewer\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""));
        const HttpReply named = m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/x"), QByteArray("viewer-token"));
        QCOMPARE(named.message(), QStringLiteral("rayjobs.ray.io \"x\" is forbidden: User \"viewer\" cannot get resource \"rayjobs\" in API group \"ray.io\" in the namespace \"starforge\""));
        QCOMPARE(named.json().value(QStringLiteral("details")).toObject().value(QStringLiteral("kind")).toString(), QStringLiteral("rayjobs"));
        const HttpReply node = m_http->get(QStringLiteral("/api/v1/nodes/h200-00"), QByteArray("viewer-token"));
        QCOMPARE(node.message(), QStringLiteral("nodes \"h200-00\" is forbidden: User \"viewer\" cannot get resource \"nodes\" in API group \"\" at the cluster scope"));
        // Self-subject access review, in JSON.
        const HttpReply review = m_http->send("POST", QStringLiteral("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
                                              R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"starforge","verb":"get","resource":"pods","subresource":"log"}}})",
                                              "application/json", QByteArray("viewer-token"));
        QCOMPARE(review.status, 201);
        QCOMPARE(review.json().value(QStringLiteral("status")).toObject().value(QStringLiteral("allowed")).toBool(), true);
        const HttpReply denied = m_http->send("POST", QStringLiteral("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
                                              R"({"spec":{"resourceAttributes":{"namespace":"starforge","verb":"create","group":"ray.io","resource":"rayjobs"}}})",
                                              "application/json", QByteArray("viewer-token"));
        QCOMPARE(denied.json().value(QStringLiteral("status")).toObject().value(QStringLiteral("allowed")).toBool(), false);
    }

    void discovery()
    {
        const HttpReply api = m_http->get(QStringLiteral("/api"));
        QCOMPARE(api.json().value(QStringLiteral("versions")).toArray().first().toString(), QStringLiteral("v1"));
        const HttpReply apis = m_http->get(QStringLiteral("/apis"));
        QStringList groups;
        for (const QJsonValue &g : apis.json().value(QStringLiteral("groups")).toArray()) {
            groups << g.toObject().value(QStringLiteral("name")).toString();
        }
        for (const char *g : {"batch", "ray.io", "events.k8s.io", "authorization.k8s.io"}) {
            QVERIFY2(groups.contains(QString::fromLatin1(g)), g);
        }
        const HttpReply v1 = m_http->get(QStringLiteral("/api/v1"));
        QStringList resources;
        for (const QJsonValue &r : v1.json().value(QStringLiteral("resources")).toArray()) {
            resources << r.toObject().value(QStringLiteral("name")).toString();
        }
        for (const char *r : {"nodes", "pods", "pods/log", "pods/proxy", "events", "services", "namespaces", "secrets"}) {
            QVERIFY2(resources.contains(QString::fromLatin1(r)), r);
        }
        QCOMPARE(m_http->get(QStringLiteral("/apis/ray.io/v1")).json().value(QStringLiteral("groupVersion")).toString(),
                 QStringLiteral("ray.io/v1"));
        const HttpReply missing = m_http->get(QStringLiteral("/apis/nope.io/v1/things"));
        QCOMPARE(missing.status, 404);
        QCOMPARE(missing.message(), QStringLiteral("the server could not find the requested resource"));
    }

    void fleetNodes()
    {
        const HttpReply nodes = m_http->get(QStringLiteral("/api/v1/nodes"));
        QCOMPARE(nodes.status, 200);
        const QJsonObject list = nodes.json();
        QCOMPARE(list.value(QStringLiteral("kind")).toString(), QStringLiteral("NodeList"));
        const QJsonArray items = list.value(QStringLiteral("items")).toArray();
        QCOMPARE(items.size(), 4);
        // Built-in list items carry no kind, as on a real API server.
        QVERIFY(!items.first().toObject().contains(QStringLiteral("kind")));
        const HttpReply gpu = m_http->get(QStringLiteral("/api/v1/nodes?labelSelector=starforge%2Fgpu-series%3Dh200"));
        QCOMPARE(gpu.json().value(QStringLiteral("items")).toArray().size(), 3);
        const QJsonObject node = gpu.json().value(QStringLiteral("items")).toArray().first().toObject();
        QCOMPARE(node.value(QStringLiteral("status")).toObject().value(QStringLiteral("allocatable")).toObject()
                     .value(QStringLiteral("nvidia.com/gpu")).toString(), QStringLiteral("8"));
        const HttpReply cpu = m_http->get(QStringLiteral("/api/v1/nodes?labelSelector=!starforge%2Fgpu-series"));
        QCOMPARE(cpu.json().value(QStringLiteral("items")).toArray().size(), 1);
    }

    void createGetDeleteWithStatusErrors()
    {
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        const HttpReply created = m_http->send("POST", pods, podJson(QStringLiteral("p1")));
        QCOMPARE(created.status, 201);
        QVERIFY(!created.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString().isEmpty());
        QCOMPARE(created.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("namespace")).toString(), QStringLiteral("starforge"));

        const HttpReply again = m_http->send("POST", pods, podJson(QStringLiteral("p1")));
        QCOMPARE(again.status, 409);
        QCOMPARE(again.reason(), QStringLiteral("AlreadyExists"));
        QCOMPARE(again.message(), QStringLiteral("pods \"p1\" already exists"));

        const HttpReply badName = m_http->send("POST", pods, podJson(QStringLiteral("Bad_Name")));
        QCOMPARE(badName.status, 422);
        QCOMPARE(badName.reason(), QStringLiteral("Invalid"));
        QVERIFY2(badName.message().startsWith(QStringLiteral("Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain")),
                 qPrintable(badName.message()));
        const QJsonObject cause = badName.json().value(QStringLiteral("details")).toObject().value(QStringLiteral("causes")).toArray().first().toObject();
        QCOMPARE(cause.value(QStringLiteral("field")).toString(), QStringLiteral("metadata.name"));
        QCOMPARE(cause.value(QStringLiteral("reason")).toString(), QStringLiteral("FieldValueInvalid"));

        const HttpReply noName = m_http->send("POST", pods, R"({"apiVersion":"v1","kind":"Pod","metadata":{}})");
        QCOMPARE(noName.status, 422);
        QCOMPARE(noName.message(), QStringLiteral("Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"));

        const HttpReply generated = m_http->send("POST", pods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"gen-"}})");
        QCOMPARE(generated.status, 201);
        QVERIFY(QRegularExpression(QStringLiteral("^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$"))
                    .match(generated.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString()).hasMatch());

        const HttpReply malformed = m_http->send("POST", pods, "{not json");
        QCOMPARE(malformed.status, 400);
        QVERIFY(malformed.message().startsWith(QStringLiteral("couldn't get version/kind; json parse error")));

        const HttpReply wrongNs = m_http->send("POST", QStringLiteral("/api/v1/namespaces/nowhere/pods"), podJson(QStringLiteral("p2")));
        QCOMPARE(wrongNs.status, 404);
        QCOMPARE(wrongNs.message(), QStringLiteral("namespaces \"nowhere\" not found"));

        QCOMPARE(m_http->get(pods + QStringLiteral("/p1")).json().value(QStringLiteral("kind")).toString(), QStringLiteral("Pod"));
        const HttpReply deleted = m_http->send("DELETE", pods + QStringLiteral("/p1"), R"({"propagationPolicy":"Background"})");
        QCOMPARE(deleted.status, 200);
        const HttpReply gone = m_http->get(pods + QStringLiteral("/p1"));
        QCOMPARE(gone.status, 404);
        QCOMPARE(gone.message(), QStringLiteral("pods \"p1\" not found"));
        QCOMPARE(gone.json().value(QStringLiteral("details")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("p1"));
        QCOMPARE(m_http->get(QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs/none")).message(),
                 QStringLiteral("rayjobs.ray.io \"none\" not found"));
    }

    // DeleteOptions.preconditions as kube-apiserver checks them (docs/kubernetes-facts.md,
    // "Delete preconditions"): a uid or resourceVersion that is not the object's is a 409
    // Conflict naming the kind, and nothing is deleted; matching ones delete.
    void deletePreconditions()
    {
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        const HttpReply created = m_http->send("POST", pods, podJson(QStringLiteral("pre")));
        QCOMPARE(created.status, 201);
        const QJsonObject meta = created.json().value(QStringLiteral("metadata")).toObject();
        const QString uid = meta.value(QStringLiteral("uid")).toString();
        const QString rv = meta.value(QStringLiteral("resourceVersion")).toString();

        const HttpReply wrongUid = m_http->send("DELETE", pods + QStringLiteral("/pre"),
                                                R"({"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"0000-old"}})");
        QCOMPARE(wrongUid.status, 409);
        QCOMPARE(wrongUid.reason(), QStringLiteral("Conflict"));
        QCOMPARE(wrongUid.message(), QStringLiteral("Operation cannot be fulfilled on Pod \"pre\": the UID in the precondition (0000-old) does "
                                                    "not match the UID in record (%1). The object might have been deleted and then recreated").arg(uid));
        QCOMPARE(wrongUid.json().value(QStringLiteral("details")).toObject(),
                 (QJsonObject{{QStringLiteral("name"), QStringLiteral("pre")}, {QStringLiteral("kind"), QStringLiteral("Pod")}}));
        const HttpReply wrongRv = m_http->send("DELETE", pods + QStringLiteral("/pre"),
                                               QStringLiteral(R"({"preconditions":{"uid":"%1","resourceVersion":"1"}})").arg(uid).toUtf8());
        QCOMPARE(wrongRv.status, 409);
        QCOMPARE(wrongRv.message(), QStringLiteral("Operation cannot be fulfilled on Pod \"pre\": the ResourceVersion in the precondition (1) "
                                                   "does not match the ResourceVersion in record (%1). The object might have been modified").arg(rv));
        QCOMPARE(m_http->get(pods + QStringLiteral("/pre")).status, 200);   // both refusals left it alone
        // A missing object is 404 before any precondition is looked at.
        QCOMPARE(m_http->send("DELETE", pods + QStringLiteral("/nobody"), R"({"preconditions":{"uid":"x"}})").status, 404);
        const HttpReply matching = m_http->send("DELETE", pods + QStringLiteral("/pre"),
                                                QStringLiteral(R"({"preconditions":{"uid":"%1","resourceVersion":"%2"}})").arg(uid, rv).toUtf8());
        QCOMPARE(matching.status, 200);
        QCOMPARE(m_http->get(pods + QStringLiteral("/pre")).status, 404);

        // A namespace's delete checks the uid itself, with the storage layer's words.
        const HttpReply ns = m_http->send("POST", QStringLiteral("/api/v1/namespaces"),
                                          R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"pre-ns"}})");
        QCOMPARE(ns.status, 201);
        const HttpReply nsStale = m_http->send("DELETE", QStringLiteral("/api/v1/namespaces/pre-ns"), R"({"preconditions":{"uid":"old"}})");
        QCOMPARE(nsStale.status, 409);
        QCOMPARE(nsStale.message(), QStringLiteral("Operation cannot be fulfilled on namespaces \"pre-ns\": Precondition failed: UID in "
                                                   "precondition: old, UID in object meta: %1")
                                        .arg(ns.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString()));

        // A custom resource is named by kind and group; the RayJob made again under the same name
        // is kept when a delete names the first one's uid.
        const QString rayjobs = QStringLiteral("/apis/ray.io/v1/namespaces/starforge/rayjobs");
        const QByteArray job = QJsonDocument(starforgeRayJob(QStringLiteral("pre"), QStringLiteral("bcdf01"), QStringLiteral("python -c pass"),
                                                             unschedulableHead())).toJson();
        const HttpReply first = m_http->send("POST", rayjobs, job);
        QCOMPARE(first.status, 201);
        const QString firstUid = first.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString();
        QCOMPARE(m_http->send("DELETE", rayjobs + QStringLiteral("/pre-bcdf01")).status, 200);
        QTRY_COMPARE(m_http->get(rayjobs + QStringLiteral("/pre-bcdf01")).status, 404);
        const HttpReply second = m_http->send("POST", rayjobs, job);
        QCOMPARE(second.status, 201);
        const QString secondUid = second.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString();
        QVERIFY(secondUid != firstUid);
        const HttpReply stale = m_http->send("DELETE", rayjobs + QStringLiteral("/pre-bcdf01"),
                                             QStringLiteral(R"({"propagationPolicy":"Background","preconditions":{"uid":"%1"}})").arg(firstUid).toUtf8());
        QCOMPARE(stale.status, 409);
        QCOMPARE(stale.message(), QStringLiteral("Operation cannot be fulfilled on RayJob.ray.io \"pre-bcdf01\": the UID in the precondition (%1) "
                                                 "does not match the UID in record (%2). The object might have been deleted and then recreated")
                                      .arg(firstUid, secondUid));
        QCOMPARE(stale.json().value(QStringLiteral("details")).toObject(),
                 (QJsonObject{{QStringLiteral("name"), QStringLiteral("pre-bcdf01")}, {QStringLiteral("group"), QStringLiteral("ray.io")},
                              {QStringLiteral("kind"), QStringLiteral("RayJob")}}));
        QCOMPARE(m_http->get(rayjobs + QStringLiteral("/pre-bcdf01")).json().value(QStringLiteral("metadata")).toObject()
                     .value(QStringLiteral("uid")).toString(), secondUid);
    }

    // Secrets as the API server keeps them: stringData merged into data, type defaulted, the
    // docker config key required, RBAC and the Status texts as for any type.
    void secrets()
    {
        const QString secrets = QStringLiteral("/api/v1/namespaces/starforge/secrets");
        const QByteArray opaque = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"hf-token"},"data":{"a":"eA=="},"stringData":{"token":"hf_abc"}})";
        const HttpReply created = m_http->send("POST", secrets, opaque);
        QCOMPARE(created.status, 201);
        const QJsonObject secret = m_http->get(secrets + QStringLiteral("/hf-token")).json();
        QCOMPARE(secret.value(QStringLiteral("type")).toString(), QStringLiteral("Opaque"));
        QCOMPARE(secret.value(QStringLiteral("data")).toObject(),
                 (QJsonObject{{QStringLiteral("a"), QStringLiteral("eA==")}, {QStringLiteral("token"), QStringLiteral("aGZfYWJj")}}));
        QVERIFY(!secret.contains(QStringLiteral("stringData")));
        QCOMPARE(m_http->send("POST", secrets, R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"hf-token"}})").message(), QStringLiteral("secrets \"hf-token\" already exists"));

        const HttpReply noConfig = m_http->send("POST", secrets, R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"regcred"},"type":"kubernetes.io/dockerconfigjson"})");
        QCOMPARE(noConfig.status, 422);
        QCOMPARE(noConfig.message(), QStringLiteral("Secret \"regcred\" is invalid: data[.dockerconfigjson]: Required value"));
        const QByteArray pullSecret = "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"regcred\"},\"type\":\"kubernetes.io/dockerconfigjson\","
                                      "\"stringData\":{\".dockerconfigjson\":\"{\\\"auths\\\":{}}\"}}";
        QCOMPARE(m_http->send("POST", secrets, pullSecret).status, 201);
        const QJsonArray pullSecrets = m_http->get(secrets + QStringLiteral("?fieldSelector=type%3Dkubernetes.io%2Fdockerconfigjson"))
                                           .json().value(QStringLiteral("items")).toArray();
        QCOMPARE(pullSecrets.size(), 1);
        QCOMPARE(pullSecrets.first().toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("regcred"));

        QCOMPARE(m_http->get(secrets, QByteArray("viewer-token")).message(),
                 QStringLiteral("secrets is forbidden: User \"viewer\" cannot list resource \"secrets\" in API group \"\" in the namespace \"starforge\""));
        QCOMPARE(m_http->send("DELETE", secrets + QStringLiteral("/hf-token")).status, 200);
        const HttpReply gone = m_http->get(secrets + QStringLiteral("/hf-token"));
        QCOMPARE(gone.status, 404);
        QCOMPARE(gone.message(), QStringLiteral("secrets \"hf-token\" not found"));
    }

    void patchAndUpdate()
    {
        const QString pod = QStringLiteral("/api/v1/namespaces/starforge/pods/p");
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), podJson(QStringLiteral("p"))).status, 201);
        const HttpReply patched = m_http->send("PATCH", pod, R"({"metadata":{"labels":{"extra":"1","app":null}}})",
                                               "application/merge-patch+json");
        QCOMPARE(patched.status, 200);
        const QJsonObject labels = patched.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("labels")).toObject();
        QCOMPARE(labels, (QJsonObject{{QStringLiteral("extra"), QStringLiteral("1")}}));
        QJsonObject object = patched.json();
        QJsonObject meta = object.value(QStringLiteral("metadata")).toObject();
        meta.insert(QStringLiteral("resourceVersion"), QStringLiteral("1"));
        object.insert(QStringLiteral("metadata"), meta);
        const HttpReply stale = m_http->send("PUT", pod, QJsonDocument(object).toJson());
        QCOMPARE(stale.status, 409);
        QCOMPARE(stale.reason(), QStringLiteral("Conflict"));
        const HttpReply jsonPatch = m_http->send("PATCH", pod, "[]", "application/json-patch+json");
        QCOMPARE(jsonPatch.status, 415);
    }

    void listPagingAndSelectors()
    {
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        for (int i = 0; i < 25; ++i) {
            QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("p%1").arg(i, 2, 10, QLatin1Char('0')),
                                                        i % 2 ? QStringLiteral("{\"app\":\"odd\"}") : QStringLiteral("{\"app\":\"even\"}"))).status, 201);
        }
        QStringList names;
        QString token;
        int pages = 0;
        do {
            const HttpReply page = m_http->get(pods + QStringLiteral("?limit=10") + (token.isEmpty() ? QString() : QStringLiteral("&continue=") + token));
            QCOMPARE(page.status, 200);
            for (const QJsonValue &item : page.json().value(QStringLiteral("items")).toArray()) {
                names << item.toObject().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString();
            }
            const QJsonObject meta = page.json().value(QStringLiteral("metadata")).toObject();
            token = meta.value(QStringLiteral("continue")).toString();
            if (!token.isEmpty()) {
                QVERIFY(meta.contains(QStringLiteral("remainingItemCount")));
            }
            ++pages;
        } while (!token.isEmpty() && pages < 10);
        QCOMPARE(pages, 3);
        QCOMPARE(names.size(), 25);
        QCOMPARE(names.first(), QStringLiteral("p00"));
        QCOMPARE(names.last(), QStringLiteral("p24"));

        QCOMPARE(m_http->get(pods + QStringLiteral("?labelSelector=app%3Dodd")).json().value(QStringLiteral("items")).toArray().size(), 12);
        QCOMPARE(m_http->get(pods + QStringLiteral("?labelSelector=app+in+(odd,even)")).json().value(QStringLiteral("items")).toArray().size(), 25);
        QCOMPARE(m_http->get(pods + QStringLiteral("?fieldSelector=metadata.name%3Dp03")).json().value(QStringLiteral("items")).toArray().size(), 1);
        const HttpReply badField = m_http->get(pods + QStringLiteral("?fieldSelector=spec.image%3Dx"));
        QCOMPARE(badField.status, 400);
        QCOMPARE(badField.message(), QStringLiteral("field label not supported: spec.image"));
        const HttpReply badLabel = m_http->get(pods + QStringLiteral("?labelSelector=app+in+()"));
        QCOMPARE(badLabel.status, 400);
        QCOMPARE(badLabel.reason(), QStringLiteral("BadRequest"));

        // A continue token outlives the history it stands on: 410 Expired, as the API server says.
        const HttpReply first = m_http->get(pods + QStringLiteral("?limit=5"));
        const QString stale = first.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("continue")).toString();
        QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("late"))).status, 201);
        QCOMPARE(m_http->send("POST", QStringLiteral("/sandbox/v1/faults/expire-history")).status, 200);
        const HttpReply expired = m_http->get(pods + QStringLiteral("?limit=5&continue=") + stale);
        QCOMPARE(expired.status, 410);
        QCOMPARE(expired.reason(), QStringLiteral("Expired"));
        QVERIFY(expired.message().startsWith(QStringLiteral("The provided continue parameter is too old")));
    }

    void watchReplaysAndFollows()
    {
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("a"))).status, 201);
        const HttpReply list = m_http->get(pods);
        const QString rv = list.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("resourceVersion")).toString();
        QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("b"))).status, 201);

        // From the list's resourceVersion: only what came after it, then live changes.
        WatchReader watch(m_http->open(pods + QStringLiteral("?watch=true&resourceVersion=") + rv));
        QVERIFY(watch.waitForEvents(1));
        QCOMPARE(watch.events().first().value(QStringLiteral("type")).toString(), QStringLiteral("ADDED"));
        const QJsonObject object = watch.events().first().value(QStringLiteral("object")).toObject();
        QCOMPARE(object.value(QStringLiteral("kind")).toString(), QStringLiteral("Pod"));
        QCOMPARE(object.value(QStringLiteral("apiVersion")).toString(), QStringLiteral("v1"));
        QCOMPARE(object.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("b"));
        QCOMPARE(watch.reply()->rawHeader("Transfer-Encoding"), QByteArray("chunked"));

        QCOMPARE(m_http->send("PATCH", pods + QStringLiteral("/b"), R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json").status, 200);
        QCOMPARE(m_http->send("DELETE", pods + QStringLiteral("/a")).status, 200);
        QVERIFY(watch.waitForEvents(3));
        QCOMPARE(watch.types(), (QStringList{QStringLiteral("ADDED"), QStringLiteral("MODIFIED"), QStringLiteral("DELETED")}));
        // resourceVersions only go up.
        qint64 last = 0;
        for (const QJsonObject &e : watch.events()) {
            const qint64 v = e.value(QStringLiteral("object")).toObject().value(QStringLiteral("metadata")).toObject()
                                 .value(QStringLiteral("resourceVersion")).toString().toLongLong();
            QVERIFY(v > last);
            last = v;
        }

        // Without a resourceVersion: the current state as ADDED first.
        WatchReader fresh(m_http->open(pods + QStringLiteral("?watch=1")));
        QVERIFY(fresh.waitForEvents(1));
        QCOMPARE(fresh.types(), QStringList{QStringLiteral("ADDED")});
    }

    void watchSelectorTransitions()
    {
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        WatchReader watch(m_http->open(pods + QStringLiteral("?watch=true&labelSelector=app%3Dweb")));
        QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("x"), QStringLiteral("{\"app\":\"db\"}"))).status, 201);
        QCOMPARE(m_http->send("PATCH", pods + QStringLiteral("/x"), R"({"metadata":{"labels":{"app":"web"}}})", "application/merge-patch+json").status, 200);
        QCOMPARE(m_http->send("PATCH", pods + QStringLiteral("/x"), R"({"metadata":{"labels":{"app":"db"}}})", "application/merge-patch+json").status, 200);
        QVERIFY(watch.waitForEvents(2));
        // Moving into the selection is ADDED, out of it DELETED; the db-only create is not seen.
        QCOMPARE(watch.types(), (QStringList{QStringLiteral("ADDED"), QStringLiteral("DELETED")}));
    }

    void watchTimeoutEndsCleanlyWithABookmark()
    {
        restartSandbox(QStringLiteral("cpu:1x0"), 200);
        WatchReader watch(m_http->open(QStringLiteral("/api/v1/nodes?watch=true&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=")
                                       + QString::number(m_sandbox->store()->currentResourceVersion())));
        QVERIFY(watch.waitForEnd(5000));
        QCOMPARE(watch.reply()->error(), QNetworkReply::NoError);
        QVERIFY(watch.events().size() >= 2); // periodic bookmarks and one before the deadline
        for (const QJsonObject &e : watch.events()) {
            QCOMPARE(e.value(QStringLiteral("type")).toString(), QStringLiteral("BOOKMARK"));
            const QJsonObject o = e.value(QStringLiteral("object")).toObject();
            QCOMPARE(o.value(QStringLiteral("kind")).toString(), QStringLiteral("Node"));
            QVERIFY(!o.value(QStringLiteral("metadata")).toObject().value(QStringLiteral("resourceVersion")).toString().isEmpty());
        }
    }

    void tooOldResourceVersionIsAnErrorEvent()
    {
        const QString old = QString::number(m_sandbox->store()->currentResourceVersion());
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), podJson(QStringLiteral("a"))).status, 201);
        QCOMPARE(m_http->send("POST", QStringLiteral("/sandbox/v1/faults/expire-history")).status, 200);
        WatchReader watch(m_http->open(QStringLiteral("/api/v1/namespaces/starforge/pods?watch=true&resourceVersion=") + old));
        QVERIFY(watch.waitForEnd());
        QCOMPARE(watch.reply()->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
        QCOMPARE(watch.types(), QStringList{QStringLiteral("ERROR")});
        const QJsonObject status = watch.events().first().value(QStringLiteral("object")).toObject();
        QCOMPARE(status.value(QStringLiteral("code")).toInt(), 410);
        QCOMPARE(status.value(QStringLiteral("reason")).toString(), QStringLiteral("Expired"));
        QVERIFY(status.value(QStringLiteral("message")).toString().startsWith(QStringLiteral("too old resource version: ") + old + u' '));
    }

    void droppedWatchesAndFaults()
    {
        WatchReader watch(m_http->open(QStringLiteral("/api/v1/nodes?watch=true")));
        QVERIFY(watch.waitForEvents(4));
        const HttpReply dropped = m_http->send("POST", QStringLiteral("/sandbox/v1/faults/drop-watches"));
        QCOMPARE(dropped.json().value(QStringLiteral("dropped")).toInt(), 1);
        QVERIFY(watch.waitForEnd());
        QVERIFY(watch.reply()->error() != QNetworkReply::NoError); // cut, not a clean end

        QCOMPARE(m_http->send("PUT", QStringLiteral("/sandbox/v1/faults"), R"({"rate500":1})").status, 200);
        const HttpReply failing = m_http->get(QStringLiteral("/api/v1/nodes"));
        QCOMPARE(failing.status, 500);
        QCOMPARE(failing.reason(), QStringLiteral("InternalError"));
        QCOMPARE(m_http->get(QStringLiteral("/version")).status, 200); // discovery and /version stay up
        QCOMPARE(m_http->send("PUT", QStringLiteral("/sandbox/v1/faults"), R"({"rate429":1})").status, 200);
        const HttpReply throttled = m_http->get(QStringLiteral("/api/v1/nodes"));
        QCOMPARE(throttled.status, 429);
        QCOMPARE(throttled.headers.value("retry-after"), QByteArray("1"));
        QCOMPARE(m_http->send("PUT", QStringLiteral("/sandbox/v1/faults"), R"({"rate429":2})").status, 400);
        QCOMPARE(m_http->send("PUT", QStringLiteral("/sandbox/v1/faults"), R"({})").status, 200);
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/nodes")).status, 200);
        // Only the admin may switch faults.
        QCOMPARE(m_http->send("PUT", QStringLiteral("/sandbox/v1/faults"), R"({})", "application/json", QByteArray("viewer-token")).status, 403);
    }

    // The deterministic knobs and the request record: next500Creates fails exactly that many
    // POSTs and is spent; the record lists each resource request with its answer, in order.
    void countedCreateFailuresAndTheRequestRecord()
    {
        const QString pods = QStringLiteral("/api/v1/namespaces/starforge/pods");
        m_sandbox->api()->clearRequestRecord();
        const HttpReply set = m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), R"({"next500Creates":2})");
        QCOMPARE(set.status, 200);
        QCOMPARE(set.json().value(QStringLiteral("next500Creates")).toInt(), 2);
        QCOMPARE(m_http->get(pods).status, 200);   // reads are not counted
        const HttpReply failed = m_http->send("POST", pods, podJson(QStringLiteral("c1")));
        QCOMPARE(failed.status, 500);
        QCOMPARE(failed.reason(), QStringLiteral("InternalError"));
        QVERIFY2(failed.message().startsWith(QStringLiteral("Internal error occurred: ")), qPrintable(failed.message()));
        QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("c1"))).status, 500);
        QCOMPARE(m_http->get(QStringLiteral("/sandbox/v1/faults")).json().value(QStringLiteral("next500Creates")).toInt(), 0);
        QCOMPARE(m_http->send("POST", pods, podJson(QStringLiteral("c1"))).status, 201);
        QCOMPARE(m_http->get(pods + QStringLiteral("/c1")).status, 200);

        QStringList seen;
        for (const Sandbox::RecordedRequest &r : m_sandbox->api()->requestRecord()) {
            seen << QStringLiteral("%1 %2 %3").arg(QString::fromLatin1(r.method), r.path).arg(r.code);
        }
        QCOMPARE(seen, (QStringList{QStringLiteral("GET %1 200").arg(pods), QStringLiteral("POST %1 500").arg(pods),
                                    QStringLiteral("POST %1 500").arg(pods), QStringLiteral("POST %1 201").arg(pods),
                                    QStringLiteral("GET %1/c1 200").arg(pods)}));
        // The control API is not a resource request, and a knob that is not a count is refused.
        QCOMPARE(m_http->send("PATCH", QStringLiteral("/sandbox/v1/faults"), R"({"next500Creates":1.5})").status, 400);
        QCOMPARE(Sandbox::Faults::parse(QStringLiteral("next500Creates=3,holdS3Uploads=1"))->next500Creates, 3);
        QVERIFY(Sandbox::Faults::parse(QStringLiteral("holdS3Uploads=1"))->holdS3Uploads);
        QVERIFY(!Sandbox::Faults::parse(QStringLiteral("holdS3Uploads=2")));

        // An answer that comes later (a delayed request) is filled in when it goes out, and the
        // record keeps only the latest RequestRecordLimit requests.
        m_sandbox->api()->setFaults(Sandbox::Faults{.delayMs = 200});
        m_sandbox->api()->clearRequestRecord();
        std::unique_ptr<QNetworkReply> slow(m_http->open(pods + QStringLiteral("/c1")));
        QTRY_COMPARE(m_sandbox->api()->requestRecord().size(), 1);
        QCOMPARE(m_sandbox->api()->requestRecord().first().code, 0);
        QTRY_VERIFY(slow->isFinished());
        QCOMPARE(m_sandbox->api()->requestRecord().first().code, 200);
        m_sandbox->api()->setFaults(Sandbox::Faults{});
        for (int i = 0; i < Sandbox::ApiServer::RequestRecordLimit + 5; ++i) {
            QCOMPARE(m_http->get(QStringLiteral("/api/v1/nodes?limit=1")).status, 200);
        }
        QCOMPARE(m_sandbox->api()->requestRecord().size(), Sandbox::ApiServer::RequestRecordLimit);
        QCOMPARE(m_sandbox->api()->requestRecord().first().query, QStringLiteral("limit=1"));
    }

    void ownerDeletionCollectsDependents()
    {
        // A Service owns a pod (no controller acts on either): deleting the owner collects the pod.
        const HttpReply owner = m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/services"),
                                             R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"owner"},"spec":{}})");
        QCOMPARE(owner.status, 201);
        const QString uid = owner.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("uid")).toString();
        const QByteArray dependent = QStringLiteral(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"owned","ownerReferences":[{"apiVersion":"v1","kind":"Service","name":"owner","uid":"%1","controller":true}]},"spec":{"schedulerName":"test-none"}})").arg(uid).toUtf8();
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), dependent).status, 201);
        QCOMPARE(m_http->send("DELETE", QStringLiteral("/api/v1/namespaces/starforge/services/owner")).status, 200);
        QTRY_COMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/pods/owned")).status, 404);
    }

    void hostileRequestsAreRefused()
    {
        // Raw bytes over TLS: a chunk size that would overflow the body counter.
        const auto rawExchange = [&](const QByteArray &bytes) -> QByteArray {
            QSslSocket socket;
            QSslConfiguration config = QSslConfiguration::defaultConfiguration();
            config.setCaCertificates(QSslCertificate::fromData(m_sandbox->caCertificatePem(), QSsl::Pem));
            socket.setSslConfiguration(config);
            socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), static_cast<quint16>(m_sandbox->apiServerUrl().port()));
            // The server runs in this thread: wait with the event loop, not a blocking call.
            if (!QTest::qWaitFor([&] { return socket.isEncrypted(); }, 5000)) return QByteArray("no TLS: ") + socket.errorString().toUtf8();
            socket.write(bytes);
            QByteArray answer;
            (void)QTest::qWaitFor([&] { answer += socket.readAll(); return answer.contains("\r\n\r\n") || socket.state() != QAbstractSocket::ConnectedState; }, 5000);
            return answer;
        };
        const QByteArray auth = "Authorization: Bearer " + m_sandbox->token() + "\r\n";
        const QByteArray overflow = rawExchange("POST /api/v1/namespaces/starforge/pods HTTP/1.1\r\nHost: x\r\n" + auth
                                                + "Transfer-Encoding: chunked\r\n\r\n1\r\na\r\n7fffffffffffffff\r\n");
        QVERIFY2(overflow.startsWith("HTTP/1.1 400"), overflow.constData());
        const QByteArray garbage = rawExchange("NOT A REQUEST\r\n\r\n");
        QVERIFY2(garbage.startsWith("HTTP/1.1 400"), garbage.constData());
        // A HEAD watch is headers only, no chunked framing to confuse the next response.
        const QByteArray head = rawExchange("HEAD /api/v1/nodes?watch=1 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n");
        QVERIFY2(head.startsWith("HTTP/1.1 200") && !head.contains("Transfer-Encoding"), head.constData());
        QCOMPARE(m_http->get(QStringLiteral("/version")).status, 200); // still serving

        // Empty path segments name nothing; a patch cannot move an object.
        QCOMPARE(m_http->send("DELETE", QStringLiteral("/api/v1/namespaces//pods")).status, 404);
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/pods")).status, 404);
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/pods"), podJson(QStringLiteral("stay"))).status, 201);
        const HttpReply moved = m_http->send("PATCH", QStringLiteral("/api/v1/namespaces/starforge/pods/stay"),
                                             R"({"metadata":{"namespace":"default","name":"elsewhere"}})", "application/merge-patch+json");
        QCOMPARE(moved.status, 200);
        QCOMPARE(moved.json().value(QStringLiteral("metadata")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("stay"));
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/default/pods/elsewhere")).status, 404);
        // A timeout too large for a timer is clamped, not overflowed.
        WatchReader watch(m_http->open(QStringLiteral("/api/v1/nodes?watch=1&timeoutSeconds=10000000000000000")));
        QVERIFY(watch.waitForEvents(4));
    }

    void eventsThroughBothApis()
    {
        const QByteArray event = R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"p.1"},
            "involvedObject":{"kind":"Pod","name":"p","namespace":"starforge"},"reason":"FailedScheduling","type":"Warning",
            "message":"0/4 nodes are available","source":{"component":"default-scheduler"},"count":2})";
        QCOMPARE(m_http->send("POST", QStringLiteral("/api/v1/namespaces/starforge/events"), event).status, 201);
        const HttpReply core = m_http->get(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=involvedObject.kind%3DPod%2CinvolvedObject.name%3Dp%2Creason%3DFailedScheduling"));
        QCOMPARE(core.json().value(QStringLiteral("items")).toArray().size(), 1);
        QCOMPARE(m_http->get(QStringLiteral("/api/v1/namespaces/starforge/events?fieldSelector=source%3Ddefault-scheduler")).json()
                     .value(QStringLiteral("items")).toArray().size(), 1);
        const HttpReply v1 = m_http->get(QStringLiteral("/apis/events.k8s.io/v1/namespaces/starforge/events?fieldSelector=regarding.name%3Dp"));
        QCOMPARE(v1.status, 200);
        const QJsonObject item = v1.json().value(QStringLiteral("items")).toArray().first().toObject();
        QCOMPARE(item.value(QStringLiteral("note")).toString(), QStringLiteral("0/4 nodes are available"));
        QCOMPARE(item.value(QStringLiteral("deprecatedCount")).toInt(), 2);
        const HttpReply rejected = m_http->get(QStringLiteral("/apis/events.k8s.io/v1/namespaces/starforge/events?fieldSelector=involvedObject.name%3Dp"));
        QCOMPARE(rejected.status, 400);
        QCOMPARE(rejected.message(), QStringLiteral("field label not supported: involvedObject.name"));
    }
};

QTEST_GUILESS_MAIN(TestSandboxApi)
#include "tst_sandbox_api.moc"
