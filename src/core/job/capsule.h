#pragma once

// The Capsule (docs/design.md, "The submit path", step 2): a code folder, the job's jobspec.json, a
// manifest.json (path, size and SHA-256 of every file) and runner.pex, packed as one
// deterministic zip under a single top-level folder, which Ray strips. The SHA-256 of the zip's
// bytes is its content address (object key `capsules/<sha256>.zip`): the same tree gives the same
// bytes on any machine, in any time zone, for any user, so an unchanged tree is not uploaded
// again. docs/capsule.md describes the layout, the determinism rules, the excludes and the
// symlink policy.
//
// Files are hashed in parallel first (the manifest needs every hash), then deflated in parallel
// in 1 MiB blocks while one thread writes the entries in sorted order (ZipWriter, zipwriter.h).
// The zip is written to a temporary file beside the output and renamed into place only when
// complete, so a failure or a cancel leaves no partial file.

#include "core/util/result.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace Starforge::Job {

struct CapsuleOptions
{
    QString sourceDir;            // the code folder
    QString outputPath;           // the zip to write; never packed itself, even inside sourceDir
    QByteArray jobSpecJson;       // written as <top>/jobspec.json; required
    // The runner, written as <top>/runner.pex: a file, or bytes when runnerPexPath is empty.
    QString runnerPexPath;
    QByteArray runnerPex;
    // Fixed, so that it never changes the bytes; Ray strips it when it unpacks.
    QString topLevelDir = QStringLiteral("capsule");
    // gitignore syntax, relative to the code folder; they override .gitignore files.
    QStringList excludePatterns;
    bool useGitIgnore = true;
    bool useDefaultExcludes = true;
    // zlib 1..9; part of the bytes, so fixed per capsule format. Level 1: 3.3x faster than
    // zip's level 6 on two cores for a zip about 3.5 % larger (docs/capsule.md).
    int compressionLevel = 1;
    int threads = 0;              // 0: QThread::idealThreadCount()
};

// The folder a Capsule is built in before upload: QTemporaryDir's template, in the system's
// temporary folder. A process that dies mid-submit leaves it behind; the session's start-up
// clean-up removes those older than a day by this name.
QString temporaryCapsuleFolderTemplate();

struct CapsuleFile
{
    QString path;                 // relative to the top-level folder, `/` separators
    qint64 size = 0;
    QByteArray sha256;            // hex
    bool executable = false;
    bool stored = false;          // stored by type or by the entropy probe (small files that deflate
                                  // cannot shrink are stored too, and not flagged here)
};

struct CapsuleResult
{
    QString zipPath;
    QByteArray sha256;            // hex, of the zip's bytes: the content address
    qint64 size = 0;              // of the zip
    int fileCount = 0;            // files in the zip, manifest.json included
    QList<CapsuleFile> files;     // what the manifest lists, sorted by path
    QByteArray manifestJson;
    QStringList skipped;          // sockets, FIFOs and devices left out, with the reason

    QString objectKey() const { return QStringLiteral("capsules/") + QString::fromLatin1(sha256) + QStringLiteral(".zip"); }
    // Hex SHA-256 of manifestJson, the bytes packed as manifest.json. The RayJob carries it, and
    // the runner refuses a Capsule whose manifest.json is not these bytes (docs/capsule.md,
    // "Code integrity").
    QByteArray manifestSha256() const;
};

// One path of a code folder as a Capsule build walks it: packed, or left out and why.
struct CapsuleTreeEntry
{
    QString path;                 // relative to the code folder, `/` separators
    bool isDir = false;
    qint64 size = 0;              // files only
    QString excludedBy;           // the pattern that leaves it out (IgnoreRules::excludedBy); empty: packed
};

struct CapsuleListing
{
    QList<CapsuleTreeEntry> entries;  // in walk order: sorted, a folder before what it holds;
                                      // an excluded folder is listed, its contents are not
    int fileCount = 0;            // files the Capsule would hold: the packed ones plus
                                  // jobspec.json, runner.pex and manifest.json
    qint64 bytes = 0;             // the packed files' and runner.pex's bytes, before compression
    QStringList skipped;          // sockets, FIFOs and devices, as CapsuleResult::skipped
};

// What a build with these options would pack and leave out, from the same walk (excludes,
// .gitignore files, links, odd files; the same errors), without hashing or writing anything.
// The wizard's file tree and Capsule estimate come from it.
Result<CapsuleListing> listCapsuleTree(const CapsuleOptions &options);

struct CapsuleProgress
{
    enum class Stage { Scanning, Hashing, Writing };
    Stage stage = Stage::Scanning;
    qint64 filesDone = 0;
    qint64 filesTotal = 0;
    qint64 bytesDone = 0;
    qint64 bytesTotal = 0;
};

// Builds one Capsule on worker threads; results come back on the object's thread.
class CapsuleBuilder final : public QObject
{
    Q_OBJECT
public:
    explicit CapsuleBuilder(QObject *parent = nullptr);
    // Cancels a running build and waits for its threads.
    ~CapsuleBuilder() override;

    // Starts a build; finished() follows. One build at a time per object.
    void start(const CapsuleOptions &options);
    // Stops the build; finished() follows with a "cancelled" error and no output file exists.
    void cancel();

    bool isRunning() const { return m_running; }
    bool isFinished() const { return m_result.has_value(); }
    // Valid after finished().
    const Result<CapsuleResult> &result() const { return *m_result; }

    // The same work, synchronously on the calling thread (plus a worker pool): for the CLI,
    // benchmarks and tests. `cancelled` is polled between blocks; `progress` is called from
    // the calling thread.
    static Result<CapsuleResult> build(const CapsuleOptions &options, const std::atomic_bool *cancelled = nullptr,
                                       const std::function<void(const CapsuleProgress &)> &progress = {});

Q_SIGNALS:
    // Throttled to about one signal per percent, plus the end of each stage.
    void progress(const Starforge::Job::CapsuleProgress &progress);
    void finished();

private:
    struct Shared;
    std::shared_ptr<Shared> m_shared;
    std::optional<Result<CapsuleResult>> m_result;
    bool m_running = false;
};

} // namespace Starforge::Job
