#pragma once

// What the benchmarks share about their peers (kubectl, openssl, zip, Python, boto3): the peer's
// version read at run time, from the program itself, and a figure that is either measured or
// says why not. A peer that is missing or failed prints "not measured: <why>", never a number.

#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QString>
#include <QStringList>

#include <optional>

namespace Starforge::Bench {

// A peer's figure, or why there is none.
struct PeerFigure
{
    std::optional<double> value;
    QString notMeasured;   // set when value is empty

    static PeerFigure measured(double v) { return {v, {}}; }
    static PeerFigure missing(const QString &why) { return {std::nullopt, why}; }

    // "<value with decimals><unit>" or "not measured: <why>".
    QString text(int decimals, const QString &unit = {}) const
    {
        return value ? QString::number(*value, 'f', decimals) + unit : QStringLiteral("not measured: ") + notMeasured;
    }
    // peer / ours (peerOverOurs) or ours / peer, or "–" when the peer was not measured.
    QString ratio(double ours, bool peerOverOurs, int decimals = 1, const QString &suffix = QStringLiteral("x")) const
    {
        if (!value || *value <= 0 || ours <= 0) return QStringLiteral("–");
        return QString::number(peerOverOurs ? *value / ours : ours / *value, 'f', decimals) + suffix;
    }
};

// The first line of `program args` (stdout, then stderr) matched by pattern, its first capture
// group (or the whole match); "unknown version" when the program is missing, fails or prints
// nothing that matches.
inline QString toolVersion(const QString &program, const QStringList &args, const QString &pattern)
{
    if (QStandardPaths::findExecutable(program).isEmpty() && !program.startsWith(u'/')) return QStringLiteral("not installed");
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(30000) || p.exitStatus() != QProcess::NormalExit) return QStringLiteral("unknown version");
    const QString out = QString::fromUtf8(p.readAllStandardOutput() + '\n' + p.readAllStandardError());
    const QRegularExpressionMatch m = QRegularExpression(pattern, QRegularExpression::MultilineOption).match(out);
    if (!m.hasMatch()) return QStringLiteral("unknown version");
    return m.lastCapturedIndex() >= 1 ? m.captured(1) : m.captured(0);
}

inline QString kubectlVersion(const QString &kubectl)
{
    return toolVersion(kubectl, {QStringLiteral("version"), QStringLiteral("--client"), QStringLiteral("-o"), QStringLiteral("json")},
                       QStringLiteral("\"gitVersion\":\\s*\"([^\"]+)\""));
}

// Why a finished QProcess gives no figure ("" when it ran and exited 0).
inline QString processFailure(const QString &name, QProcess &p, bool finished)
{
    if (p.error() == QProcess::FailedToStart) return name + QStringLiteral(" could not start: ") + p.errorString();
    if (!finished) return name + QStringLiteral(" did not finish");
    if (p.exitStatus() != QProcess::NormalExit) return name + QStringLiteral(" crashed");
    if (p.exitCode() != 0) {
        const QString err = QString::fromUtf8(p.readAllStandardError()).trimmed().section(u'\n', 0, 0);
        return name + QStringLiteral(" exited %1%2").arg(p.exitCode()).arg(err.isEmpty() ? QString() : QStringLiteral(": ") + err.left(200));
    }
    return {};
}

} // namespace Starforge::Bench
