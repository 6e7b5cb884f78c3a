// Streamed SHA-256 and MD5 through OpenSSL EVP: the published test vectors, block boundaries,
// files, and a clear error for a file that cannot be read.

#include "core/crypto/digest.h"
#include "support/testutil.h"

#include <QTemporaryDir>
#include <QTest>

using namespace Starforge;
using Starforge::Crypto::Digest;

class TestDigest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void vectors()
    {
        // FIPS 180-2 and RFC 1321 examples.
        QCOMPARE(Digest::sha256("abc").toHex(), QByteArray("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(Digest::sha256(QByteArray()).toHex(), QByteArray("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(Digest::sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").toHex(),
                 QByteArray("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        QCOMPARE(Digest::md5("").toHex(), QByteArray("d41d8cd98f00b204e9800998ecf8427e"));
        QCOMPARE(Digest::md5("message digest").toHex(), QByteArray("f96b697d7cb7938d525a2f31aaf161d0"));
    }

    void streamingEqualsOneShot()
    {
        QByteArray data(3 * 1024 * 1024 + 17, Qt::Uninitialized);
        for (qsizetype i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) & 0xff);
        Digest d(Digest::Algorithm::Sha256);
        for (qsizetype at = 0; at < data.size(); at += 65521) d.add(data.mid(at, 65521));
        const QByteArray streamed = d.result();
        QCOMPARE(streamed, Digest::sha256(data));
        // result() starts over.
        d.add("abc");
        QCOMPARE(d.result(), Digest::sha256("abc"));

        QTemporaryDir dir;
        const QString file = dir.filePath(QStringLiteral("blob"));
        QVERIFY(Testing::writeFile(file, data));
        QCOMPARE(Digest::sha256File(file).value(), streamed);
        const auto missing = Digest::sha256File(dir.filePath(QStringLiteral("missing")));
        QVERIFY(!missing.ok());
        QVERIFY(missing.error().message.startsWith(QStringLiteral("cannot read ") + dir.filePath(QStringLiteral("missing"))));
    }
};

QTEST_APPLESS_MAIN(TestDigest)
#include "tst_digest.moc"
