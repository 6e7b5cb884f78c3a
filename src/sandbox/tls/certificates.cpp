#include "sandbox/tls/certificates.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <QList>

#include <memory>

namespace Starforge::Sandbox::Tls {

namespace {

template <typename T, void (*Free)(T *)>
struct Deleter
{
    void operator()(T *p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

KeyPtr newKey()
{
    // P-256: fast to generate (milliseconds), accepted by every TLS client we test with.
    return KeyPtr(EVP_EC_gen("P-256"));
}

bool addExtension(X509 *cert, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    if (!ext) {
        return false;
    }
    const bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

// Subject O=organizations (in order), CN=commonName; valid from an hour ago (clock skew) for
// validSeconds.
CertPtr newCertificate(EVP_PKEY *subjectKey, const QByteArray &commonName, const QList<QByteArray> &organizations,
                       long validSeconds)
{
    CertPtr cert(X509_new());
    if (!cert) {
        return nullptr;
    }
    X509_set_version(cert.get(), 2);
    unsigned char serial[16];
    RAND_bytes(serial, sizeof serial);
    serial[0] &= 0x7f; // positive
    BIGNUM *bn = BN_bin2bn(serial, sizeof serial, nullptr);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), validSeconds);
    X509_set_pubkey(cert.get(), subjectKey);
    X509_NAME *name = X509_get_subject_name(cert.get());
    for (const QByteArray &o : organizations) {
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char *>(o.constData()), -1, -1, 0);
    }
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char *>(commonName.constData()), -1, -1, 0);
    return cert;
}

QByteArray certificatePem(X509 *cert)
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    PEM_write_bio_X509(bio.get(), cert);
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return QByteArray(data, size);
}

QByteArray keyPem(EVP_PKEY *key)
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return QByteArray(data, size);
}

} // namespace

Result<Material> generate(const QStringList &ipAddresses, const QStringList &dnsNames, int validDays)
{
    const KeyPtr caKey = newKey();
    const KeyPtr serverKey = newKey();
    if (!caKey || !serverKey) {
        return Error::internal(QStringLiteral("OpenSSL could not generate a P-256 key"));
    }

    const long validSeconds = static_cast<long>(validDays) * 24 * 3600;
    CertPtr ca = newCertificate(caKey.get(), "starforge-sandbox-ca", {"starforge-sandbox"}, validSeconds);
    if (!ca) {
        return Error::internal(QStringLiteral("OpenSSL could not create the sandbox CA"));
    }
    X509_set_issuer_name(ca.get(), X509_get_subject_name(ca.get()));
    bool ok = addExtension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE")
        && addExtension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign")
        && addExtension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
    ok = ok && X509_sign(ca.get(), caKey.get(), EVP_sha256()) > 0;

    CertPtr server = newCertificate(serverKey.get(), "starforge-sandbox", {"starforge-sandbox"}, validSeconds);
    ok = ok && server;
    if (ok) {
        X509_set_issuer_name(server.get(), X509_get_subject_name(ca.get()));
        QStringList alt;
        for (const QString &ip : ipAddresses) {
            alt << QStringLiteral("IP:") + ip;
        }
        for (const QString &dns : dnsNames) {
            alt << QStringLiteral("DNS:") + dns;
        }
        const QByteArray altNames = alt.join(u',').toLatin1();
        ok = addExtension(server.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE")
            && addExtension(server.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment")
            && addExtension(server.get(), ca.get(), NID_ext_key_usage, "serverAuth")
            && addExtension(server.get(), ca.get(), NID_authority_key_identifier, "keyid:always")
            && (altNames.isEmpty() || addExtension(server.get(), ca.get(), NID_subject_alt_name, altNames.constData()))
            && X509_sign(server.get(), caKey.get(), EVP_sha256()) > 0;
    }
    if (!ok) {
        return Error::internal(QStringLiteral("OpenSSL could not sign the sandbox certificates"));
    }
    return Material{certificatePem(ca.get()), keyPem(caKey.get()), certificatePem(server.get()), keyPem(serverKey.get())};
}

Result<Issued> issueClientCertificate(const Material &ca, const QString &commonName, const QStringList &organizations,
                                      const QDateTime &notAfter)
{
    BioPtr caCertBio(BIO_new_mem_buf(ca.caCertificatePem.constData(), static_cast<int>(ca.caCertificatePem.size())));
    BioPtr caKeyBio(BIO_new_mem_buf(ca.caKeyPem.constData(), static_cast<int>(ca.caKeyPem.size())));
    const CertPtr caCert(PEM_read_bio_X509(caCertBio.get(), nullptr, nullptr, nullptr));
    const KeyPtr caKey(PEM_read_bio_PrivateKey(caKeyBio.get(), nullptr, nullptr, nullptr));
    if (!caCert || !caKey) {
        return Error::internal(QStringLiteral("the CA to sign a client certificate with is not a PEM certificate and key"));
    }
    const KeyPtr key = newKey();
    if (!key) {
        return Error::internal(QStringLiteral("OpenSSL could not generate a P-256 key"));
    }
    QList<QByteArray> orgs;
    for (const QString &o : organizations) {
        orgs << o.toUtf8();
    }
    // newCertificate counts from an hour ago.
    const long validSeconds = static_cast<long>(QDateTime::currentDateTimeUtc().secsTo(notAfter));
    CertPtr cert = newCertificate(key.get(), commonName.toUtf8(), orgs, validSeconds);
    const bool ok = cert && X509_set_issuer_name(cert.get(), X509_get_subject_name(caCert.get())) == 1
        && addExtension(cert.get(), caCert.get(), NID_basic_constraints, "critical,CA:FALSE")
        && addExtension(cert.get(), caCert.get(), NID_key_usage, "critical,digitalSignature")
        && addExtension(cert.get(), caCert.get(), NID_ext_key_usage, "clientAuth")
        && addExtension(cert.get(), caCert.get(), NID_authority_key_identifier, "keyid:always")
        && X509_sign(cert.get(), caKey.get(), EVP_sha256()) > 0;
    if (!ok) {
        return Error::internal(QStringLiteral("OpenSSL could not sign the client certificate for %1").arg(commonName));
    }
    return Issued{certificatePem(cert.get()), keyPem(key.get())};
}

} // namespace Starforge::Sandbox::Tls
