#pragma once

// One command-line override as Hydra 1.3 reads it: NeMo-RL's run_*.py scripts hand the JobSpec's
// recipe.overrides to Hydra's override parser (OverridesParser.parse_overrides), so a line Hydra
// refuses fails the job only once its GPUs are up. This is a recursive-descent reading of the
// grammar Hydra defines in hydra/grammar/OverrideLexer.g4 and OverrideParser.g4 (tag v1.3.2),
// with the functions Hydra registers (int, float, str, bool; choice, range, interval, glob, tag,
// sort, shuffle) evaluated far enough to know their kind of result:
//
//   key=value   +key=value   ++key=value   ~key   ~key=value     (value may be empty: key=)
//   key: a, a.b.c, $a, 0.a, group/option, any of them @package
//   value: unquoted (letters, digits, _ - / + . $ % * @ ? | :, ${interpolations}, \-escapes,
//          inner spaces), 'quoted' or "quoted" with \' \" escapes, [lists], {dicts: ...},
//          function calls
//
// A sweep (a=1,2, choice(...), range(...), interval(...), glob(...), tag(...), sort or shuffle
// of several values or of a sweep) is refused: sweeps are for --multirun, and a job runs once.
// So is an empty key, which Hydra's grammar lets through but no config has. docs/jobspec.md
// describes the rules for users; tests/data/hydra-overrides.json holds the cases checked.

#include <QString>

#include <optional>

namespace Starforge::Job {

struct HydraOverride
{
    enum class Type { Change, Add, ForceAdd, Delete };  // key=, +key=, ++key=, ~key
    enum class Problem {
        None,
        Token,      // a character no token of Hydra's lexer takes (ANTLR's "token recognition error")
        Syntax,     // tokens in an order the parser refuses
        Function,   // an unknown function or arguments Hydra's function refuses
        Sweep,      // parses, but is a sweep: --multirun only
        EmptyKey,   // parses, but the key is empty ("=5", "@pkg=x")
    };

    Type type = Type::Change;
    QString key;            // "policy.model_name", "server/db" (without "@package")
    QString package;        // after '@'; empty without one
    bool hasValue = false;  // false only for "~key"
    Problem problem = Problem::None;
    QString message;        // one line: what is wrong, in Hydra's words where it has some, and what to fix
    int column = 0;         // 1-based character where the problem was found; 0 when it is the whole line

    bool ok() const { return problem == Problem::None; }

    static HydraOverride parse(const QString &text);
    // The problem as "Hydra cannot parse \"<text>\": ..." (one line), or nothing when one run of
    // Hydra takes it.
    static std::optional<QString> check(const QString &text);
    // value as a Hydra quoted string: single quotes unless value has a single quote and no double
    // one; backslashes before a quote and at the end doubled, as the grammar wants.
    static QString quoted(const QString &value);
};

} // namespace Starforge::Job
