// `starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]`: packs a folder as a
// complete Capsule, exactly as a submission would (Job::capsuleOptionsFor), and prints its
// content address. Nothing leaves the machine.

#include "cli/commands/commands.h"
#include "cli/output.h"
#include "core/job/capsule.h"
#include "core/job/jobspec.h"
#include "core/job/submitter.h"

#include <QFileInfo>
#include <QJsonObject>
#include <QRegularExpression>

namespace Starforge::Cli {

namespace {

// A JobSpec for a folder packed without one: the Capsule is still complete (jobspec.json,
// manifest.json, runner.pex), named after the folder.
Job::JobSpec minimalSpec(const QString &dir)
{
    QString name = QFileInfo(dir).fileName().toLower();
    name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    name = name.left(Job::JobSpec::MaxNameLength - 4);
    while (name.endsWith(u'-')) name.chop(1);
    if (name.isEmpty() || !name.at(0).isLetter()) name.prepend(QStringLiteral("job-"));
    Job::JobSpec spec;
    spec.name = name;
    spec.recipe.algorithm = QStringLiteral("grpo");
    spec.recipe.config = QStringLiteral("config.yaml");
    spec.pools = {Job::Pool{QStringLiteral("train"), QStringLiteral("default"), 1, 8}};
    return spec;
}

class CapsuleBuildCommand final : public Command
{
    Q_OBJECT
public:
    using Command::Command;

    void run() override
    {
        const QStringList &p = m_args.positionals;
        if (p.size() != 3) {
            fail(Error::invalid(tr("usage: starforge-cli capsule build DIR [--spec SPEC] [--out FILE] [--json]")));
            return;
        }
        const QString dir = QFileInfo(p.at(2)).absoluteFilePath();
        if (!QFileInfo(dir).isDir()) {
            fail(Error::invalid(tr("%1 is not a folder; give the code folder to pack.").arg(p.at(2))));
            return;
        }
        QString specPath = m_args.value(QStringLiteral("spec"));
        if (specPath.isEmpty() && QFileInfo::exists(dir + QStringLiteral("/jobspec.json"))) {
            specPath = dir + QStringLiteral("/jobspec.json");   // the folder's own JobSpec
        }
        Job::JobSpec spec;
        if (!specPath.isEmpty()) {
            auto loaded = Job::JobSpec::load(specPath);
            if (!loaded) {
                fail(loaded.error());
                return;
            }
            spec = *loaded;
        } else {
            spec = minimalSpec(dir);
        }
        const QString output = QFileInfo(m_args.values.contains(QStringLiteral("out")) ? m_args.value(QStringLiteral("out"))
                                                                                      : QStringLiteral("capsule.zip")).absoluteFilePath();
        const auto built = Job::CapsuleBuilder::build(Job::capsuleOptionsFor(spec, output, Job::defaultRunnerPexPath(), dir));
        if (!built) {
            fail(built.error());
            return;
        }
        if (json()) {
            printJson(m_out, QJsonObject{{QStringLiteral("path"), built->zipPath},
                                         {QStringLiteral("sha256"), QString::fromLatin1(built->sha256)},
                                         {QStringLiteral("size"), static_cast<double>(built->size)},
                                         {QStringLiteral("files"), built->fileCount},
                                         {QStringLiteral("objectKey"), built->objectKey()},
                                         {QStringLiteral("jobSpec"), specPath.isEmpty() ? QStringLiteral("minimal") : QFileInfo(specPath).absoluteFilePath()}});
        } else {
            // The labels stay English, as the JSON keys: scripts and docs/capsule.md read these lines.
            m_out << "capsule  " << built->zipPath << Qt::endl
                  << "sha256   " << built->sha256 << Qt::endl
                  << "size     " << byteCount(built->size) << Qt::endl
                  << "files    " << built->fileCount << Qt::endl;
            if (specPath.isEmpty()) {
                m_out << "jobspec  " << tr("minimal (no --spec given), name %1").arg(spec.name) << Qt::endl;
            }
        }
        finish(Ok);
    }
};

} // namespace

std::unique_ptr<Command> makeCapsuleBuildCommand(const CommandContext &context)
{
    return std::make_unique<CapsuleBuildCommand>(context);
}

} // namespace Starforge::Cli

#include "capsulecommand.moc"
