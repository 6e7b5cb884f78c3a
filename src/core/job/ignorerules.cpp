#include <QCoreApplication>
#include "core/job/ignorerules.h"

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(IgnoreRules)
};

// The bracket expression at pattern[pi] ('[' already seen at pi - 1) against c. Returns the index
// after ']' or -1 when the bracket is not closed (then '[' is a literal, as in git).
qsizetype matchBracket(const QByteArray &pattern, qsizetype pi, char c, bool &matched)
{
    bool negate = false;
    if (pi < pattern.size() && (pattern[pi] == '!' || pattern[pi] == '^')) {
        negate = true;
        ++pi;
    }
    bool hit = false;
    bool first = true;
    while (pi < pattern.size() && (first || pattern[pi] != ']')) {
        first = false;
        char lo = pattern[pi];
        if (lo == '\\' && pi + 1 < pattern.size()) lo = pattern[++pi];
        ++pi;
        char hi = lo;
        if (pi + 1 < pattern.size() && pattern[pi] == '-' && pattern[pi + 1] != ']') {
            hi = pattern[pi + 1];
            if (hi == '\\' && pi + 2 < pattern.size()) hi = pattern[++pi + 1];
            pi += 2;
        }
        const auto uc = static_cast<unsigned char>(c);
        if (uc >= static_cast<unsigned char>(lo) && uc <= static_cast<unsigned char>(hi)) hit = true;
    }
    if (pi >= pattern.size()) return -1;
    matched = (hit != negate) && c != '/';
    return pi + 1;
}

bool match(const QByteArray &p, qsizetype pi, const QByteArray &s, qsizetype si)
{
    while (pi < p.size()) {
        const char pc = p[pi];
        if (pc == '*') {
            const bool doubleStar = pi + 1 < p.size() && p[pi + 1] == '*';
            const bool atSegmentStart = pi == 0 || p[pi - 1] == '/';
            if (doubleStar && atSegmentStart && (pi + 2 == p.size() || p[pi + 2] == '/')) {
                if (pi + 2 == p.size()) return true;  // "x/**": everything below
                // "**/": zero or more whole folders.
                const qsizetype rest = pi + 3;
                if (match(p, rest, s, si)) return true;
                for (qsizetype k = si; k < s.size(); ++k) {
                    if (s[k] == '/' && match(p, rest, s, k + 1)) return true;
                }
                return false;
            }
            // A plain star (and a "**" not between slashes) stops at '/'.
            qsizetype next = pi + 1;
            while (next < p.size() && p[next] == '*') ++next;
            for (qsizetype k = si; k <= s.size(); ++k) {
                if (match(p, next, s, k)) return true;
                if (k < s.size() && s[k] == '/') return false;
            }
            return false;
        }
        if (si >= s.size()) return false;
        if (pc == '?') {
            if (s[si] == '/') return false;
            ++pi;
            ++si;
            continue;
        }
        if (pc == '[') {
            bool matched = false;
            const qsizetype after = matchBracket(p, pi + 1, s[si], matched);
            if (after >= 0) {
                if (!matched) return false;
                pi = after;
                ++si;
                continue;
            }
        }
        char literal = pc;
        if (pc == '\\' && pi + 1 < p.size()) literal = p[++pi];
        if (literal != s[si]) return false;
        ++pi;
        ++si;
    }
    return si == s.size();
}

} // namespace

QByteArrayList IgnoreRules::defaultPatterns()
{
    return {
        QByteArrayLiteral("__pycache__/"), QByteArrayLiteral("*.pyc"), QByteArrayLiteral("*.pyo"),
        QByteArrayLiteral(".pytest_cache/"), QByteArrayLiteral(".mypy_cache/"), QByteArrayLiteral(".ruff_cache/"),
        QByteArrayLiteral(".ipynb_checkpoints/"), QByteArrayLiteral(".tox/"), QByteArrayLiteral(".nox/"),
        QByteArrayLiteral(".venv/"), QByteArrayLiteral("node_modules/"), QByteArrayLiteral(".DS_Store"),
        QByteArrayLiteral(".idea/"), QByteArrayLiteral(".vscode/"), QByteArrayLiteral("*.swp"),
    };
}

bool IgnoreRules::isVersionControlDir(const QByteArray &name)
{
    return name == ".git" || name == ".hg" || name == ".svn";
}

void IgnoreRules::addPatterns(const QByteArray &text, const QByteArray &baseDir, Layer layer)
{
    for (const QByteArray &line : text.split('\n')) addPattern(line, baseDir, layer);
}

void IgnoreRules::addPattern(const QByteArray &rawLine, const QByteArray &baseDir, Layer layer)
{
    QByteArray line = rawLine;
    if (line.endsWith('\r')) line.chop(1);
    // Trailing spaces are dropped unless escaped with a backslash.
    while (line.endsWith(' ') && !(line.size() >= 2 && line[line.size() - 2] == '\\')) line.chop(1);
    if (line.isEmpty() || line.startsWith('#')) return;
    Rule rule;
    rule.baseDir = baseDir;
    if (line.startsWith('!')) {
        rule.negated = true;
        line.remove(0, 1);
    } else if (line.startsWith("\\!") || line.startsWith("\\#")) {
        line.remove(0, 1);
    }
    if (line.endsWith(' ') && line.endsWith("\\ ")) line.remove(line.size() - 2, 1);
    if (line.endsWith('/')) {
        rule.dirOnly = true;
        line.chop(1);
    }
    // A slash at the start or in the middle ties the pattern to its .gitignore's folder.
    rule.anchored = line.contains('/');
    if (line.startsWith('/')) line.remove(0, 1);
    if (line.isEmpty()) return;
    rule.pattern = line;
    rule.text = rawLine.trimmed();
    m_layers[static_cast<int>(layer)].append(rule);
}

int IgnoreRules::verdict(const QList<Rule> &rules, const QByteArray &path, bool isDir, const Rule **matched)
{
    for (qsizetype i = rules.size() - 1; i >= 0; --i) {
        const Rule &rule = rules[i];
        if (rule.dirOnly && !isDir) continue;
        QByteArray below = path;
        if (!rule.baseDir.isEmpty()) {
            if (!path.startsWith(rule.baseDir) || path.size() <= rule.baseDir.size() || path[rule.baseDir.size()] != '/') continue;
            below = path.mid(rule.baseDir.size() + 1);
        }
        const QByteArray subject = rule.anchored ? below : below.mid(below.lastIndexOf('/') + 1);
        if (globMatch(rule.pattern, subject)) {
            if (matched) *matched = &rule;
            return rule.negated ? -1 : 1;
        }
    }
    return 0;
}

bool IgnoreRules::isExcluded(const QByteArray &relativePath, bool isDir) const
{
    for (int layer = 2; layer >= 0; --layer) {
        const int v = verdict(m_layers[layer], relativePath, isDir);
        if (v != 0) return v > 0;
    }
    return false;
}

QString IgnoreRules::excludedBy(const QByteArray &relativePath, bool isDir) const
{
    for (int layer = 2; layer >= 0; --layer) {
        const Rule *rule = nullptr;
        const int v = verdict(m_layers[layer], relativePath, isDir, &rule);
        if (v < 0) return {};
        if (v == 0) continue;
        const QString text = QString::fromUtf8(rule->text);
        switch (static_cast<Layer>(layer)) {
        case Layer::User: return Text::tr("%1 (exclude pattern)").arg(text);
        case Layer::GitIgnore:
            return rule->baseDir.isEmpty() ? QStringLiteral("%1 (.gitignore)").arg(text)
                                           : Text::tr("%1 (.gitignore in %2/)").arg(text, QString::fromUtf8(rule->baseDir));
        case Layer::Default: return QStringLiteral("%1 (default)").arg(text);
        }
    }
    return {};
}

bool IgnoreRules::globMatch(const QByteArray &pattern, const QByteArray &path)
{
    return match(pattern, 0, path, 0);
}

} // namespace Starforge::Job
