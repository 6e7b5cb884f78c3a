// starforge-sandbox: the local Kubernetes + KubeRay + S3 + vLLM stand-in. Its content arrives
// with the sandbox issue; until then it says so and fails, so nothing mistakes it for a cluster.

#include <QCoreApplication>
#include <QTextStream>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("starforge-sandbox"));
    QCoreApplication::setApplicationVersion(QStringLiteral(STARFORGE_VERSION));
    QTextStream err(stderr);
    err << "starforge-sandbox " << QCoreApplication::applicationVersion() << Qt::endl
        << "starforge-sandbox: not built yet: the sandbox cluster is not implemented in this version" << Qt::endl;
    return 2;
}
