// bench_s3_multipart: our multipart upload of a 1 GiB file against boto3's upload_file (Debian's
// python3-boto3 under /usr/bin/python3) with the same part size and concurrency, into the same
// radosgw, in the same run, alternating. Prints a table; asserts nothing. Run it inside
// with-radosgw.sh, which provides the server:
//   sh scripts/lib/with-radosgw.sh build/bin/bench_s3_multipart [--size-mib N] [--part-mib N]
//      [--concurrency N] [--runs N]
// The radosgw machine is shared by client and server: figures move with the machine's load, so
// the runs alternate and the medians are compared.

#include "core/s3/multipartupload.h"
#include "core/s3/s3client.h"
#include "peer.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>

using namespace Starforge;
using namespace Starforge::S3;

namespace {

// boto3's managed transfer with the same part size and threads; prints the upload's seconds.
const char BotoScript[] = R"(
import os, sys, time
import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
path, bucket, key, part, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
s3 = boto3.client("s3", endpoint_url=os.environ["STARFORGE_TEST_S3_ENDPOINT"],
                  region_name=os.environ.get("STARFORGE_TEST_S3_REGION", "us-east-1"),
                  aws_access_key_id=os.environ["STARFORGE_TEST_S3_ACCESS_KEY"],
                  aws_secret_access_key=os.environ["STARFORGE_TEST_S3_SECRET_KEY"],
                  config=Config(s3={"addressing_style": "path"}, max_pool_connections=threads + 2))
config = TransferConfig(multipart_threshold=part, multipart_chunksize=part, max_concurrency=threads, use_threads=True)
start = time.monotonic()
s3.upload_file(path, bucket, key, Config=config)
print("%.6f" % (time.monotonic() - start))
)";

template <typename T>
void waitFinished(T *object)
{
    QEventLoop loop; // a benchmark's main, not library code
    QObject::connect(object, &T::finished, &loop, &QEventLoop::quit);
    if (!object->isFinished()) {
        loop.exec();
    }
}

bool check(S3Reply *reply, const char *what)
{
    waitFinished(reply);
    const bool ok = reply->result().ok();
    if (!ok) {
        std::fprintf(stderr, "%s failed: %s\n", what, qPrintable(reply->result().error().message));
    }
    reply->deleteLater();
    return ok;
}

double median(QList<double> values)
{
    std::sort(values.begin(), values.end());
    return values.isEmpty() ? 0 : values[values.size() / 2];
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addOption({QStringLiteral("size-mib"), QStringLiteral("File size in MiB."), QStringLiteral("n"), QStringLiteral("1024")});
    parser.addOption({QStringLiteral("part-mib"), QStringLiteral("Part size in MiB."), QStringLiteral("n"), QStringLiteral("16")});
    parser.addOption({QStringLiteral("concurrency"), QStringLiteral("Parts in flight."), QStringLiteral("n"), QStringLiteral("4")});
    parser.addOption({QStringLiteral("runs"), QStringLiteral("Runs per client."), QStringLiteral("n"), QStringLiteral("3")});
    parser.process(app);
    const qint64 size = parser.value(QStringLiteral("size-mib")).toLongLong() * 1048576;
    const qint64 part = parser.value(QStringLiteral("part-mib")).toLongLong() * 1048576;
    const int concurrency = parser.value(QStringLiteral("concurrency")).toInt();
    const int runs = std::max(1, parser.value(QStringLiteral("runs")).toInt());

    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!env.contains(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT"))) {
        std::fprintf(stderr, "run inside scripts/lib/with-radosgw.sh (STARFORGE_TEST_S3_ENDPOINT is not set)\n");
        return 2;
    }
    ClientConfig config;
    config.endpoint = QUrl(env.value(QStringLiteral("STARFORGE_TEST_S3_ENDPOINT")));
    config.region = env.value(QStringLiteral("STARFORGE_TEST_S3_REGION"), QStringLiteral("us-east-1"));
    config.bucket = QStringLiteral("starforge-bench");
    config.credentials.accessKeyId = env.value(QStringLiteral("STARFORGE_TEST_S3_ACCESS_KEY")).toUtf8();
    config.credentials.secretAccessKey = env.value(QStringLiteral("STARFORGE_TEST_S3_SECRET_KEY")).toUtf8();
    S3Client client(config);
    if (!check(client.createBucket(), "creating the bucket")) {
        return 1;
    }

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("upload.bin"));
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly)) {
            std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
            return 1;
        }
        QByteArray block(8 * 1048576, Qt::Uninitialized);
        QRandomGenerator random(1);
        for (qint64 done = 0; done < size; done += block.size()) {
            random.fillRange(reinterpret_cast<quint32 *>(block.data()), block.size() / 4);
            file.write(block.constData(), std::min<qint64>(block.size(), size - done));
        }
    }
    std::printf("file %lld MiB, part %lld MiB, concurrency %d, %d runs each, endpoint %s\n\n",
                static_cast<long long>(size / 1048576), static_cast<long long>(part / 1048576), concurrency, runs,
                qPrintable(config.endpoint.toString()));
    std::printf("%-34s %4s %10s %10s\n", "client", "run", "seconds", "MiB/s");
    std::fflush(stdout);

    QList<double> ours;
    QList<double> oursMd5;
    QList<double> boto;

    // Ours: like boto3 (x-amz-content-sha256 only), or with Content-MD5 on every part too.
    // Returns MiB/s, or a negative value on failure.
    auto runOurs = [&](bool md5) -> double {
        MultipartOptions options;
        options.partSize = part;
        options.concurrency = concurrency;
        options.contentMd5 = md5;
        QElapsedTimer timer;
        timer.start();
        MultipartUpload *upload = client.uploadFile(QStringLiteral("bench/ours.bin"), path, options);
        waitFinished(upload);
        const double seconds = timer.nsecsElapsed() / 1e9;
        upload->deleteLater();
        if (!upload->result()) {
            std::fprintf(stderr, "our upload failed: %s\n", qPrintable(upload->result().error().message));
            return -1;
        }
        S3Reply *head = client.headObject(QStringLiteral("bench/ours.bin"));
        waitFinished(head);
        head->deleteLater();
        if (head->contentLength() != size) {
            std::fprintf(stderr, "our object has %lld bytes\n", static_cast<long long>(head->contentLength()));
            return -1;
        }
        check(client.deleteObject(QStringLiteral("bench/ours.bin")), "deleting our object");
        return (size / 1048576.0) / seconds;
    };
    // boto3, Debian's, not the pyenv python3 on PATH.
    // Its version from the module itself, in this run; a failed run leaves boto3 not measured.
    const QString botoVersion = Bench::toolVersion(QStringLiteral("/usr/bin/python3"),
                                                   {QStringLiteral("-c"), QStringLiteral("import boto3; print(boto3.__version__)")},
                                                   QStringLiteral("^([0-9][0-9.]*)$"));
    QString botoFailure;
    auto runBoto = [&]() -> double {
        QProcess python;
        python.start(QStringLiteral("/usr/bin/python3"),
                     {QStringLiteral("-c"), QString::fromLatin1(BotoScript), path, config.bucket, QStringLiteral("bench/boto3.bin"),
                      QString::number(part), QString::number(concurrency)});
        const bool finished = python.waitForFinished(600000);
        if (const QString failure = Bench::processFailure(QStringLiteral("boto3's upload_file"), python, finished); !failure.isEmpty()) {
            botoFailure = failure;
            return -1;
        }
        const double seconds = python.readAllStandardOutput().trimmed().toDouble();
        S3Reply *head = client.headObject(QStringLiteral("bench/boto3.bin"));
        waitFinished(head);
        head->deleteLater();
        if (head->contentLength() != size) {
            botoFailure = QStringLiteral("boto3's object has %1 bytes, not %2").arg(head->contentLength()).arg(size);
            return -1;
        }
        check(client.deleteObject(QStringLiteral("bench/boto3.bin")), "deleting boto3's object");
        return (size / 1048576.0) / seconds;
    };

    // A fresh radosgw creates its data pool on the first object: one unmeasured upload first, so
    // whichever client goes first does not pay for it.
    if (runOurs(false) < 0) {
        return 1;
    }
    const QString botoName = QStringLiteral("boto3 %1 upload_file (Debian)").arg(botoVersion);
    const QString names[] = {QStringLiteral("Starforge MultipartUpload"), QStringLiteral("Starforge, + Content-MD5"), botoName};
    for (int run = 1; run <= runs; ++run) {
        // The order rotates per run, so a slow spell on the machine does not always hit one client.
        for (int i = 0; i < 3; ++i) {
            const int which = (i + run - 1) % 3;
            if (which == 2 && !botoFailure.isEmpty()) continue;   // failed once: not measured
            const double speed = which == 2 ? runBoto() : runOurs(which == 1);
            if (speed < 0) {
                if (which == 2) continue;
                return 1;
            }
            (which == 0 ? ours : which == 1 ? oursMd5 : boto) << speed;
            std::printf("%-34s %4d %10.2f %10.1f\n", qPrintable(names[which]), run, (size / 1048576.0) / speed, speed);
            std::fflush(stdout);
        }
    }
    const Bench::PeerFigure botoMedian = botoFailure.isEmpty() ? Bench::PeerFigure::measured(median(boto)) : Bench::PeerFigure::missing(botoFailure);
    std::printf("\n%-34s %10.1f MiB/s\n", "median, Starforge", median(ours));
    std::printf("%-34s %10.1f MiB/s\n", "median, Starforge + Content-MD5", median(oursMd5));
    std::printf("%-34s %s\n", qPrintable(QStringLiteral("median, ") + botoName), qPrintable(botoMedian.text(1, QStringLiteral(" MiB/s"))));
    std::printf("%-34s %s\n", "ratio Starforge / boto3", qPrintable(botoMedian.ratio(median(ours), false, 2, QString())));
    return 0;
}
