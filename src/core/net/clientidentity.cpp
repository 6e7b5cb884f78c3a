#include "core/net/clientidentity.h"

#include <QCoreApplication>
#include <QStringList>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

namespace Starforge::Net {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(Net)
};

struct BioFree { void operator()(BIO *b) const { BIO_free(b); } };
struct KeyFree { void operator()(EVP_PKEY *k) const { EVP_PKEY_free(k); } };
struct X509Free { void operator()(X509 *x) const { X509_free(x); } };
using Bio = std::unique_ptr<BIO, BioFree>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, X509Free>;

Bio memory(const QByteArray &data)
{
    return Bio(BIO_new_mem_buf(data.constData(), static_cast<int>(data.size())));
}

// A passphrase callback that refuses: an encrypted key must fail, never prompt on a terminal.
int noPassphrase(char *, int, int, void *)
{
    return -1;
}

bool isEncrypted(const QByteArray &pem)
{
    return pem.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || pem.contains("Proc-Type: 4,ENCRYPTED");
}

QString dateText(const QDateTime &when)
{
    return when.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm 'UTC'"));
}

} // namespace

QString ClientIdentity::subject() const
{
    QStringList parts;
    for (const QString &cn : certificate.subjectInfo(QSslCertificate::CommonName)) parts << QStringLiteral("CN=") + cn;
    for (const QString &o : certificate.subjectInfo(QSslCertificate::Organization)) parts << QStringLiteral("O=") + o;
    return parts.join(QStringLiteral(", "));
}

Result<ClientIdentity> ClientIdentity::fromPem(const QByteArray &certificatePem, const QString &certWhat, const QByteArray &keyPem,
                                               const QString &keyWhat, const QDateTime &now)
{
    ClientIdentity identity;
    const QList<QSslCertificate> certificates = QSslCertificate::fromData(certificatePem, QSsl::Pem);
    if (certificates.isEmpty()) {
        return Error::invalid(Text::tr("%1 holds no PEM certificate (-----BEGIN CERTIFICATE-----).").arg(certWhat));
    }
    identity.certificate = certificates.first();
    identity.chain = certificates.mid(1);
    if (keyPem.trimmed().isEmpty()) {
        return Error::invalid(Text::tr("%1 gives a client certificate but no key; set the client key too (client-key or client-key-data).")
                                  .arg(certWhat));
    }
    if (isEncrypted(keyPem)) {
        return Error::invalid(Text::tr("%1 is encrypted with a passphrase, which Starforge cannot ask for at every connection (kubectl "
                                 "cannot either). Store it unencrypted where only you can read it, e.g. "
                                 "`openssl pkey -in key.pem -out key-plain.pem && chmod 600 key-plain.pem`.")
                                  .arg(keyWhat));
    }

    Bio keyBio = memory(keyPem);
    Key key(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, noPassphrase, nullptr));
    ERR_clear_error();
    if (!key) {
        return Error::invalid(Text::tr("%1 holds no PEM private key (-----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY).").arg(keyWhat));
    }
    QSsl::KeyAlgorithm algorithm = QSsl::Opaque;
    switch (EVP_PKEY_get_base_id(key.get())) {
    case EVP_PKEY_RSA: algorithm = QSsl::Rsa; break;
    case EVP_PKEY_EC: algorithm = QSsl::Ec; break;
    default:
        return Error::unsupported(Text::tr("%1 is a %2 key; client certificates work with RSA and EC keys.")
                                      .arg(keyWhat, QString::fromLatin1(OBJ_nid2sn(EVP_PKEY_get_base_id(key.get())))));
    }

    Bio certBio = memory(certificatePem);
    Cert x509(PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr));
    ERR_clear_error();
    if (!x509 || X509_check_private_key(x509.get(), key.get()) != 1) {
        ERR_clear_error();
        return Error::invalid(Text::tr("The client certificate in %1 (%2) does not belong to the key in %3: they were not issued together. "
                                 "Take both from the same kubeconfig user.")
                                  .arg(certWhat, identity.subject(), keyWhat));
    }
    if (identity.certificate.expiryDate() <= now) {
        return Error::invalid(Text::tr("The client certificate in %1 (%2) expired on %3. Get a new one from the cluster's administrator "
                                 "(kubeadm: `kubeadm certs renew`; kind and minikube write a fresh kubeconfig when the cluster starts).")
                                  .arg(certWhat, identity.subject(), dateText(identity.certificate.expiryDate())));
    }
    if (identity.certificate.effectiveDate() > now) {
        return Error::invalid(Text::tr("The client certificate in %1 (%2) is not valid before %3; check this machine's clock.")
                                  .arg(certWhat, identity.subject(), dateText(identity.certificate.effectiveDate())));
    }

    // Qt reads the key again from unencrypted PKCS#8, whatever form the file used.
    Bio out(BIO_new(BIO_s_mem()));
    if (PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
        ERR_clear_error();
        return Error::internal(Text::tr("The key in %1 could not be converted for the TLS library.").arg(keyWhat));
    }
    char *data = nullptr;
    const long size = BIO_get_mem_data(out.get(), &data);
    QByteArray pkcs8(data, static_cast<qsizetype>(size));
    identity.key = QSslKey(pkcs8, algorithm, QSsl::Pem, QSsl::PrivateKey);
    OPENSSL_cleanse(pkcs8.data(), static_cast<size_t>(pkcs8.size()));
    if (identity.key.isNull()) {
        return Error::internal(Text::tr("The TLS library refused the key in %1.").arg(keyWhat));
    }
    return identity;
}

} // namespace Starforge::Net
