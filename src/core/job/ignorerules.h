#pragma once

// Which paths of a code folder stay out of a Capsule: gitignore patterns (the syntax of
// gitignore(5): comments, `!` negation, a leading or inner `/` anchoring to the file's folder, a
// trailing `/` for folders only, `*`, `?`, `[...]` and `**`), read from `.gitignore` files at any
// depth, plus the user's own patterns and a short list of defaults (caches, virtualenvs).
//
// Paths are raw bytes relative to the code folder with `/` separators, so a name that is not
// valid UTF-8 can still be matched (and excluded) before the builder refuses it.

#include <QByteArray>
#include <QByteArrayList>
#include <QList>
#include <QString>

namespace Starforge::Job {

class IgnoreRules
{
public:
    // Three layers: a user pattern overrides every .gitignore, which overrides the defaults.
    // Inside a layer the last matching pattern wins, and a deeper .gitignore comes later.
    enum class Layer { Default, GitIgnore, User };

    // Caches, bytecode, virtualenvs and editor litter (docs/capsule.md says why each).
    static QByteArrayList defaultPatterns();
    // Folders never packed, whatever a pattern says: version control data.
    static bool isVersionControlDir(const QByteArray &name);

    // The lines of one .gitignore (or user patterns) whose folder is baseDir ("" = the top).
    void addPatterns(const QByteArray &text, const QByteArray &baseDir, Layer layer);
    void addPattern(const QByteArray &line, const QByteArray &baseDir, Layer layer);

    // Whether relativePath (no leading or trailing `/`) is excluded. The caller does not descend
    // into an excluded folder, so, as in git, a file under it cannot be re-included.
    bool isExcluded(const QByteArray &relativePath, bool isDir) const;
    // The pattern that excludes relativePath, as a person reads it ("*.ipynb (exclude pattern)",
    // "*.log (.gitignore in logs/)", "__pycache__/ (default)"); empty when it is packed. The
    // same decision as isExcluded(): the wizard's file tree shows why a file stays out.
    QString excludedBy(const QByteArray &relativePath, bool isDir) const;

    // A glob in gitignore's dialect against a path: `*` and `?` stop at `/`, `**` between
    // slashes crosses them. Public for the tests.
    static bool globMatch(const QByteArray &pattern, const QByteArray &path);

private:
    struct Rule
    {
        QByteArray pattern;  // without `!`, the anchoring `/` and the trailing `/`
        QByteArray baseDir;  // "" or "a/b"
        bool negated = false;
        bool dirOnly = false;
        bool anchored = false;  // matched against the whole path below baseDir, not the name
        QByteArray text;     // the line as written, for excludedBy()
    };
    // +1 excluded, -1 re-included, 0 no pattern matched; matched: the deciding rule.
    static int verdict(const QList<Rule> &rules, const QByteArray &path, bool isDir, const Rule **matched = nullptr);

    QList<Rule> m_layers[3];
};

} // namespace Starforge::Job
