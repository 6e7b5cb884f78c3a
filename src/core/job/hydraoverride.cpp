#include "core/job/hydraoverride.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include <algorithm>
#include <initializer_list>
#include <utility>
#include <vector>

namespace Starforge::Job {

namespace {

// This file's translation context, as lupdate reads it (CONTRIBUTING.md, "Translations").
struct Text {
    Q_DECLARE_TR_FUNCTIONS(HydraOverride)
};

// Token types in the order ANTLR numbers them (OverrideLexer.tokens), so that a set of expected
// tokens prints in ANTLR's order; Eof is -1 there and first here.
enum class Tok {
    Eof,
    Equal, Tilde, Plus, At, Colon, Slash, KeySpecial, DotPath,
    POpen, Comma, PClose, BracketOpen, BracketClose, BraceOpen, BraceClose,
    Float, Int, Bool, Null, UnquotedChar, Id, Esc, Ws, QuotedValue, Interpolation,
    Error,  // where the lexer stopped: no rule takes the next character
};

// As ANTLR names a token type in its messages: the literal of a one-character rule, else the rule.
QString tokName(Tok t)
{
    switch (t) {
    case Tok::Eof: return QStringLiteral("<EOF>");
    case Tok::Equal: return QStringLiteral("EQUAL");
    case Tok::Tilde: return QStringLiteral("'~'");
    case Tok::Plus: return QStringLiteral("'+'");
    case Tok::At: return QStringLiteral("'@'");
    case Tok::Colon: return QStringLiteral("':'");
    case Tok::Slash: return QStringLiteral("'/'");
    case Tok::KeySpecial: return QStringLiteral("KEY_SPECIAL");
    case Tok::DotPath: return QStringLiteral("DOT_PATH");
    case Tok::POpen: return QStringLiteral("POPEN");
    case Tok::Comma: return QStringLiteral("COMMA");
    case Tok::PClose: return QStringLiteral("PCLOSE");
    case Tok::BracketOpen: return QStringLiteral("BRACKET_OPEN");
    case Tok::BracketClose: return QStringLiteral("BRACKET_CLOSE");
    case Tok::BraceOpen: return QStringLiteral("BRACE_OPEN");
    case Tok::BraceClose: return QStringLiteral("BRACE_CLOSE");
    case Tok::Float: return QStringLiteral("FLOAT");
    case Tok::Int: return QStringLiteral("INT");
    case Tok::Bool: return QStringLiteral("BOOL");
    case Tok::Null: return QStringLiteral("NULL");
    case Tok::UnquotedChar: return QStringLiteral("UNQUOTED_CHAR");
    case Tok::Id: return QStringLiteral("ID");
    case Tok::Esc: return QStringLiteral("ESC");
    case Tok::Ws: return QStringLiteral("WS");
    case Tok::QuotedValue: return QStringLiteral("QUOTED_VALUE");
    case Tok::Interpolation: return QStringLiteral("INTERPOLATION");
    case Tok::Error: break;
    }
    return QString();
}

using TokSet = std::vector<Tok>;

bool contains(const TokSet &set, Tok t)
{
    return std::find(set.begin(), set.end(), t) != set.end();
}

// "ID" or "{<EOF>, EQUAL}", as ANTLR's IntervalSet prints.
QString setName(TokSet set)
{
    std::sort(set.begin(), set.end());
    if (set.size() == 1) return tokName(set.front());
    QStringList names;
    for (Tok t : set) names << tokName(t);
    return QLatin1Char('{') + names.join(QStringLiteral(", ")) + QLatin1Char('}');
}

// The tokens a primitive is made of (besides a lone QUOTED_VALUE), and those of a dict key,
// which has neither ':' nor interpolations.
const TokSet PrimitiveToks{Tok::Id, Tok::Null, Tok::Int, Tok::Float, Tok::Bool, Tok::Interpolation,
                           Tok::UnquotedChar, Tok::Colon, Tok::Esc, Tok::Ws};
const TokSet DictKeyToks{Tok::Id, Tok::Null, Tok::Int, Tok::Float, Tok::Bool, Tok::UnquotedChar, Tok::Esc, Tok::Ws};

TokSet elementFirst()
{
    TokSet s = PrimitiveToks;
    s.insert(s.end(), {Tok::QuotedValue, Tok::BracketOpen, Tok::BraceOpen});
    return s;
}

struct Token
{
    Tok type = Tok::Eof;
    int start = 0;
    int end = 0;
};

// ANTLR's display of text in a message: control characters escaped.
QString errorDisplay(QString text)
{
    text.replace(QLatin1Char('\n'), QLatin1String("\\n"));
    text.replace(QLatin1Char('\t'), QLatin1String("\\t"));
    text.replace(QLatin1Char('\r'), QLatin1String("\\r"));
    return text;
}

bool isLetter(QChar c)
{
    return (c >= QLatin1Char('a') && c <= QLatin1Char('z')) || (c >= QLatin1Char('A') && c <= QLatin1Char('Z'));
}

bool isDigit(QChar c)
{
    return c >= QLatin1Char('0') && c <= QLatin1Char('9');
}

// OverrideLexer.g4 as longest-match functions: each returns how many characters its rule takes
// at i (0: none). Where two rules take as many, the one defined first wins, as in ANTLR.
class Lexer
{
public:
    explicit Lexer(const QString &s) : m_s(s), m_n(int(s.size())) {}

    std::vector<Token> tokens;
    int errorAt = -1;      // where no rule matched
    QString errorText;     // what ANTLR quotes in "token recognition error at: '...'"

    void run()
    {
        bool valueMode = false;
        int i = 0;
        while (i < m_n) {
            Tok best = Tok::Error;
            int bestLen = 0;
            auto consider = [&](Tok t, int len) {
                if (len > bestLen) {
                    best = t;
                    bestLen = len;
                }
            };
            if (!valueMode) {
                consider(Tok::Equal, is(i, '=') ? 1 + ws(i + 1) : 0);
                consider(Tok::Tilde, is(i, '~') ? 1 : 0);
                consider(Tok::Plus, is(i, '+') ? 1 : 0);
                consider(Tok::At, is(i, '@') ? 1 : 0);
                consider(Tok::Colon, is(i, ':') ? 1 : 0);
                consider(Tok::Slash, is(i, '/') ? 1 : 0);
                consider(Tok::Id, id(i));  // KEY_ID -> type(ID)
                consider(Tok::KeySpecial, keySpecial(i));
                consider(Tok::DotPath, dotPath(i));
            } else {
                consider(Tok::POpen, wsAround(i, '(', true, true));
                consider(Tok::Comma, wsAround(i, ',', true, true));
                consider(Tok::PClose, wsAround(i, ')', true, false));
                consider(Tok::BracketOpen, wsAround(i, '[', false, true));
                consider(Tok::BracketClose, wsAround(i, ']', true, false));
                consider(Tok::BraceOpen, wsAround(i, '{', false, true));
                consider(Tok::BraceClose, wsAround(i, '}', true, false));
                consider(Tok::Colon, wsAround(i, ':', true, true));
                consider(Tok::Equal, wsAround(i, '=', true, true));
                consider(Tok::Float, floating(i));
                consider(Tok::Int, integer(i));
                consider(Tok::Bool, std::max(word(i, "true"), word(i, "false")));
                consider(Tok::Null, word(i, "null"));
                consider(Tok::UnquotedChar, i < m_n && QStringLiteral("/-\\+.$%*@?|").contains(m_s.at(i)) ? 1 : 0);
                consider(Tok::Id, id(i));
                consider(Tok::Esc, esc(i));
                consider(Tok::Ws, ws(i));
                consider(Tok::QuotedValue, quotedValue(i));
                consider(Tok::Interpolation, interpolation(i));
            }
            if (bestLen == 0) {
                errorAt = i;
                // ANTLR quotes what its DFA read before failing: the rest of the line for a quote
                // that never closes, else the one character.
                if (valueMode && (is(i, '\'') || is(i, '"'))) {
                    errorText = m_s.mid(i);
                } else {
                    errorText = m_s.mid(i, m_s.at(i).isHighSurrogate() && i + 1 < m_n ? 2 : 1);
                }
                tokens.push_back({Tok::Error, i, i});
                return;
            }
            tokens.push_back({best, i, i + bestLen});
            if (best == Tok::Equal) valueMode = true;  // EQUAL: '=' WS? -> mode(VALUE_MODE)
            i += bestLen;
        }
        tokens.push_back({Tok::Eof, m_n, m_n});
    }

private:
    bool is(int i, char c) const { return i < m_n && m_s.at(i) == QLatin1Char(c); }

    int ws(int i) const
    {
        int j = i;
        while (j < m_n && (m_s.at(j) == QLatin1Char(' ') || m_s.at(j) == QLatin1Char('\t'))) ++j;
        return j - i;
    }

    // WS? c WS? (each WS optional as the rule says).
    int wsAround(int i, char c, bool before, bool after) const
    {
        const int w = before ? ws(i) : 0;
        if (!is(i + w, c)) return 0;
        return w + 1 + (after ? ws(i + w + 1) : 0);
    }

    // How many characters (('_')? DIGIT)* takes from j.
    int digitsFrom(int j) const
    {
        const int start = j;
        for (;;) {
            if (j < m_n && isDigit(m_s.at(j))) {
                ++j;
            } else if (j + 1 < m_n && m_s.at(j) == QLatin1Char('_') && isDigit(m_s.at(j + 1))) {
                j += 2;
            } else {
                break;
            }
        }
        return j - start;
    }

    int digits(int i) const { return i < m_n && isDigit(m_s.at(i)) ? 1 + digitsFrom(i + 1) : 0; }

    // INT_UNSIGNED: '0' | [1-9] (('_')? DIGIT)*
    int intUnsigned(int i) const
    {
        if (is(i, '0')) return 1;
        if (i < m_n && isDigit(m_s.at(i))) return 1 + digitsFrom(i + 1);
        return 0;
    }

    // POINT_FLOAT: INT_UNSIGNED '.' | INT_UNSIGNED? '.' DIGIT (('_')? DIGIT)*
    int pointFloat(int i) const
    {
        const int a = intUnsigned(i);
        if (!is(i + a, '.')) return 0;
        const int f = digits(i + a + 1);
        if (f > 0) return a + 1 + f;
        return a > 0 ? a + 1 : 0;
    }

    // EXPONENT_FLOAT: (INT_UNSIGNED | POINT_FLOAT) [eE] [+-]? DIGIT (('_')? DIGIT)*
    int exponentFloat(int i) const
    {
        const int m = std::max(pointFloat(i), intUnsigned(i));
        if (m == 0) return 0;
        int j = i + m;
        if (!is(j, 'e') && !is(j, 'E')) return 0;
        ++j;
        if (is(j, '+') || is(j, '-')) ++j;
        const int d = digits(j);
        return d > 0 ? j + d - i : 0;
    }

    // Case-insensitive keyword (true, false, null, inf, nan).
    int word(int i, const char *w) const
    {
        const QLatin1String s(w);
        return m_s.mid(i, s.size()).compare(s, Qt::CaseInsensitive) == 0 ? int(s.size()) : 0;
    }

    int floating(int i) const
    {
        const int sign = is(i, '+') || is(i, '-') ? 1 : 0;
        const int j = i + sign;
        const int len = std::max({pointFloat(j), exponentFloat(j), word(j, "inf"), word(j, "nan")});
        return len > 0 ? sign + len : 0;
    }

    int integer(int i) const
    {
        const int sign = is(i, '+') || is(i, '-') ? 1 : 0;
        const int len = intUnsigned(i + sign);
        return len > 0 ? sign + len : 0;
    }

    // ID: (CHAR|'_') (CHAR|DIGIT|'_'|'-')*
    int id(int i) const
    {
        if (!(i < m_n && (isLetter(m_s.at(i)) || m_s.at(i) == QLatin1Char('_')))) return 0;
        int j = i + 1;
        while (j < m_n && (isLetter(m_s.at(j)) || isDigit(m_s.at(j)) || m_s.at(j) == QLatin1Char('_') || m_s.at(j) == QLatin1Char('-'))) ++j;
        return j - i;
    }

    // KEY_SPECIAL: (CHAR|'_'|'$') (CHAR|DIGIT|'_'|'-'|'$')*
    int keySpecial(int i) const
    {
        auto first = [](QChar c) { return isLetter(c) || c == QLatin1Char('_') || c == QLatin1Char('$'); };
        if (!(i < m_n && first(m_s.at(i)))) return 0;
        int j = i + 1;
        while (j < m_n && (first(m_s.at(j)) || isDigit(m_s.at(j)) || m_s.at(j) == QLatin1Char('-'))) ++j;
        return j - i;
    }

    // DOT_PATH: (KEY_SPECIAL | INT_UNSIGNED) ('.' (KEY_SPECIAL | INT_UNSIGNED))+
    int dotPath(int i) const
    {
        auto segment = [this](int k) { return std::max(keySpecial(k), intUnsigned(k)); };
        const int first = segment(i);
        if (first == 0) return 0;
        int j = i + first;
        int parts = 1;
        while (is(j, '.')) {
            const int next = segment(j + 1);
            if (next == 0) break;
            j += 1 + next;
            ++parts;
        }
        return parts > 1 ? j - i : 0;
    }

    // ESC: ('\\\\' | '\\(' | '\\)' | ... | '\\ ' | '\\\t')+
    int esc(int i) const
    {
        static const QString escaped = QStringLiteral("\\()[]{}:=, \t");
        int j = i;
        while (j + 1 < m_n && m_s.at(j) == QLatin1Char('\\') && escaped.contains(m_s.at(j + 1))) j += 2;
        return j - i;
    }

    // QUOTED_VALUE: the quote, then up to the first same quote preceded by an even number of
    // backslashes (the grammar's non-greedy `(.)*? ~[\\] ('\\\\')*`, or only `('\\\\')*`).
    int quotedValue(int i) const
    {
        if (!is(i, '\'') && !is(i, '"')) return 0;
        const QChar q = m_s.at(i);
        int backslashes = 0;
        for (int j = i + 1; j < m_n; ++j) {
            if (m_s.at(j) == q && backslashes % 2 == 0) return j + 1 - i;
            backslashes = m_s.at(j) == QLatin1Char('\\') ? backslashes + 1 : 0;
        }
        return 0;
    }

    // INTERPOLATION: '${' ~('}')+ '}'
    int interpolation(int i) const
    {
        if (!is(i, '$') || !is(i + 1, '{')) return 0;
        int j = i + 2;
        while (j < m_n && m_s.at(j) != QLatin1Char('}')) ++j;
        return j < m_n && j > i + 2 ? j + 1 - i : 0;
    }

    const QString &m_s;
    const int m_n;
};

// What an element evaluates to, as far as the checks need: Hydra's Python types, with a
// sweep's function name.
struct Value
{
    enum class Kind { Str, Int, Float, Bool, Null, List, Dict, Sweep };
    Kind kind = Kind::Str;
    QString text;               // Str: the string (unquoted, unescaped); Int, Float, Bool: the token; Sweep: the function
    std::vector<Value> items;   // List: the items; Dict: the values
};

bool holdsSweep(const Value &v)
{
    if (v.kind == Value::Kind::Sweep) return true;
    return std::any_of(v.items.begin(), v.items.end(), holdsSweep);
}

// Python's repr() of a str, as Hydra's messages show one.
QString pyRepr(const QString &s)
{
    return s.contains(QLatin1Char('\'')) && !s.contains(QLatin1Char('"')) ? QLatin1Char('"') + s + QLatin1Char('"')
                                                                          : QLatin1Char('\'') + s + QLatin1Char('\'');
}

// Hydra's _unescape_quoted_string: strips the quotes; 2n+1 backslashes before a quote (or 2n
// before the closing one) become n.
QString unquote(const QString &text)
{
    const QChar q = text.at(0);
    QString out;
    const int n = int(text.size()) - 1;  // the closing quote's index
    int i = 1;
    while (i < n) {
        if (text.at(i) == QLatin1Char('\\')) {
            int j = i;
            while (j < n && text.at(j) == QLatin1Char('\\')) ++j;
            if (j == n || text.at(j) == q) {
                const int run = j - i;
                out += QString(run / 2, QLatin1Char('\\'));
                if (j < n) out += q;  // an escaped quote inside
                i = j < n ? j + 1 : j;
                continue;
            }
            out += text.mid(i, j - i);
            i = j;
            continue;
        }
        out += text.at(i++);
    }
    return out;
}

// One of Hydra's casts (int, float, str, bool) of a value that is not a sweep; the error is
// Python's (or Hydra's) sentence, empty for a bare AssertionError.
struct CastError
{
    QString type;     // "ValueError"
    QString message;
};

std::optional<CastError> cast(const QString &to, const Value &v, Value *out)
{
    using K = Value::Kind;
    if (v.kind == K::List || v.kind == K::Dict) {
        Value result = v;
        for (Value &item : result.items) {
            if (auto e = cast(to, item, &item)) return e;
        }
        *out = result;
        return std::nullopt;
    }
    if (v.kind == K::Null) return CastError{QStringLiteral("AssertionError"), QString()};
    const bool isInfOrNan = v.kind == K::Float && (v.text.contains(QLatin1String("inf"), Qt::CaseInsensitive)
                                                   || v.text.contains(QLatin1String("nan"), Qt::CaseInsensitive));
    Value result;
    result.text = v.text;
    if (to == QLatin1String("int")) {
        result.kind = K::Int;
        if (v.kind == K::Str) {
            static const QRegularExpression pyInt(QStringLiteral("^\\s*[+-]?\\d(?:_?\\d)*\\s*$"));
            if (!pyInt.match(v.text).hasMatch())
                return CastError{QStringLiteral("ValueError"), QStringLiteral("invalid literal for int() with base 10: %1").arg(pyRepr(v.text))};
        } else if (isInfOrNan) {
            return v.text.contains(QLatin1String("nan"), Qt::CaseInsensitive)
                       ? CastError{QStringLiteral("ValueError"), QStringLiteral("cannot convert float NaN to integer")}
                       : CastError{QStringLiteral("OverflowError"), QStringLiteral("cannot convert float infinity to integer")};
        }
    } else if (to == QLatin1String("float")) {
        result.kind = K::Float;
        if (v.kind == K::Str) {
            static const QRegularExpression pyFloat(
                QStringLiteral("^\\s*[+-]?(?:(?:(?:\\d(?:_?\\d)*)?\\.\\d(?:_?\\d)*|\\d(?:_?\\d)*\\.?)(?:[eE][+-]?\\d(?:_?\\d)*)?|inf|infinity|nan)\\s*$"),
                QRegularExpression::CaseInsensitiveOption);
            if (!pyFloat.match(v.text).hasMatch())
                return CastError{QStringLiteral("ValueError"), QStringLiteral("could not convert string to float: %1").arg(pyRepr(v.text))};
        }
    } else if (to == QLatin1String("bool")) {
        result.kind = K::Bool;
        if (v.kind == K::Str && v.text.compare(QLatin1String("true"), Qt::CaseInsensitive) != 0
            && v.text.compare(QLatin1String("false"), Qt::CaseInsensitive) != 0)
            return CastError{QStringLiteral("ValueError"), QStringLiteral("Cannot cast '%1' to bool").arg(v.text)};
    } else {
        result.kind = K::Str;
    }
    *out = result;
    return std::nullopt;
}

class Parser
{
public:
    Parser(const QString &text, const Lexer &lexer) : m_text(text), m_lexer(lexer) {}

    HydraOverride run()
    {
        parseOverride();
        if (m_result.problem == HydraOverride::Problem::None && m_deferred) {
            // Hydra visits the tree, evaluating functions, only once the whole line parsed.
            m_result.problem = m_deferred->problem;
            m_result.message = m_deferred->message;
            m_result.column = m_deferred->column;
        }
        if (m_result.ok()) checkSweep();
        if (m_result.ok() && m_result.key.isEmpty()) {
            m_result.problem = HydraOverride::Problem::EmptyKey;
            m_result.message = Text::tr("\"%1\" has an empty key: Hydra's grammar lets it through, but no config has one (write key=value, e.g. grpo.max_num_steps=10).")
                                   .arg(m_text);
        }
        return m_result;
    }

private:
    using Problem = HydraOverride::Problem;

    struct Deferred
    {
        Problem problem;
        QString message;
        int column;
    };

    bool failed() const { return m_result.problem != Problem::None; }

    const Token &la(int k = 1)
    {
        const auto &tokens = m_lexer.tokens;
        const Token &t = tokens.at(std::min<size_t>(m_pos + size_t(k) - 1, tokens.size() - 1));
        if (t.type == Tok::Error) lexError();
        return t;
    }

    void consume() { ++m_pos; }

    QString text(const Token &t) const { return m_text.mid(t.start, t.end - t.start); }
    QString text(int from, int to) const { return m_text.mid(from, to - from); }
    QString display(const Token &t) const
    {
        return t.type == Tok::Eof ? QStringLiteral("'<EOF>'") : QLatin1Char('\'') + errorDisplay(text(t)) + QLatin1Char('\'');
    }

    // Where the value starts (just after "=" and its spaces), or -1 before any "=".
    int valueStart() const
    {
        for (const Token &t : m_lexer.tokens) {
            if (t.type == Tok::Equal) return t.end;
        }
        return -1;
    }

    // What to do about a line Hydra cannot read: quoting the value fixes most values (the
    // characters it refuses are fine inside quotes); a key follows the key rules.
    QString hint(int at) const
    {
        const int v = valueStart();
        if (v >= 0 && at >= v) {
            const QString value = m_text.mid(v).trimmed();
            int eq = v;
            while (eq > 0 && m_text.at(eq - 1) != QLatin1Char('=')) --eq;
            return Text::tr("quote the value: %1%2, or escape the character with \\").arg(m_text.left(eq), HydraOverride::quoted(value));
        }
        return Text::tr("write key=value, +key=value, ++key=value or ~key; a key is like grpo.max_num_steps, server/db or db@package: "
                  "letters, digits, '_', '-', '$' and '.', no spaces");
    }

    void fail(Problem problem, const QString &detail, int at)
    {
        if (failed()) return;
        m_result.problem = problem;
        m_result.column = at + 1;
        m_result.message = Text::tr("Hydra cannot parse \"%1\": %2 (character %3; %4).").arg(m_text, detail, QString::number(at + 1), hint(at));
    }

    // A syntax error at token t. While ANTLR still predicts whether the value is one element or
    // a sweep, it reads the whole first element ahead, so an error inside that element's
    // brackets or call is a failed prediction, quoted from the value's start.
    void syntaxError(const QString &detail, const Token &t)
    {
        if (m_predictFrom >= 0) {
            fail(Problem::Syntax, QStringLiteral("no viable alternative at input '%1'").arg(errorDisplay(text(m_predictFrom, t.end))), t.start);
        } else {
            fail(Problem::Syntax, detail, t.start);
        }
    }

    void lexError()
    {
        fail(Problem::Token, QStringLiteral("token recognition error at: '%1'").arg(errorDisplay(m_lexer.errorText)), m_lexer.errorAt);
    }

    // ANTLR's DefaultErrorStrategy as Hydra sees it (its listener raises at the first report):
    // one extra token is "extraneous", one missing token (canInsert: the current one would fit
    // after it) is "missing", anything else "mismatched".
    void mismatch(const TokSet &expected, bool canInsert)
    {
        const Token t = la(1);
        if (failed()) return;
        const Tok next = la(2).type;
        if (failed()) return;
        if (contains(expected, next)) {
            syntaxError(QStringLiteral("extraneous input %1 expecting %2").arg(display(t), setName(expected)), t);
        } else if (canInsert) {
            syntaxError(QStringLiteral("missing %1 at %2").arg(setName(expected), display(t)), t);
        } else {
            syntaxError(QStringLiteral("mismatched input %1 expecting %2").arg(display(t), setName(expected)), t);
        }
    }

    void noViable(int from, const Token &at)
    {
        syntaxError(QStringLiteral("no viable alternative at input '%1'").arg(errorDisplay(text(from, at.end))), at);
    }

    bool match(Tok type, bool canInsert)
    {
        if (la(1).type == type) {
            consume();
            return true;
        }
        mismatch({type}, canInsert);
        return false;
    }

    void defer(Problem problem, const QString &message, int at)
    {
        if (!m_deferred) m_deferred = Deferred{problem, message, at + 1};
    }

    // override: (key EQUAL value? | TILDE key (EQUAL value?)? | PLUS PLUS? key EQUAL value?) EOF
    void parseOverride()
    {
        const Token first = la(1);
        if (failed()) return;
        static const TokSet keyFirst{Tok::Id, Tok::KeySpecial, Tok::DotPath, Tok::At, Tok::Equal};
        if (first.type == Tok::Tilde) {
            consume();
            m_result.type = HydraOverride::Type::Delete;
            parseKey();
            if (failed()) return;
            const Tok t = la(1).type;
            if (failed()) return;
            if (t == Tok::Equal) {
                consume();
                m_result.hasValue = true;
                parseOptionalValue();
            } else if (t != Tok::Eof) {
                mismatch({Tok::Eof, Tok::Equal}, false);
            }
        } else if (first.type == Tok::Plus || contains(keyFirst, first.type)) {
            if (first.type == Tok::Plus) {
                consume();
                m_result.type = HydraOverride::Type::Add;
                if (la(1).type == Tok::Plus) {
                    consume();
                    m_result.type = HydraOverride::Type::ForceAdd;
                }
            }
            parseKey();
            if (failed()) return;
            const Tok t = la(1).type;
            if (failed()) return;
            TokSet afterEqual = elementFirst();
            afterEqual.push_back(Tok::Eof);
            if (!match(Tok::Equal, contains(afterEqual, t))) return;
            m_result.hasValue = true;
            parseOptionalValue();
        } else {
            noViable(first.start, first);
        }
        if (failed()) return;
        match(Tok::Eof, false);
    }

    // key: packageOrGroup (AT package)?;  packageOrGroup: package | ID (SLASH ID)+
    void parseKey()
    {
        if (la(1).type == Tok::Id && la(2).type == Tok::Slash) {
            QString group = text(la(1));
            consume();
            while (la(1).type == Tok::Slash) {
                consume();
                const Tok t = la(1).type;
                if (failed()) return;
                if (!match(Tok::Id, contains({Tok::Slash, Tok::At, Tok::Equal, Tok::Eof}, t))) return;
                group += QLatin1Char('/') + text(m_lexer.tokens.at(m_pos - 1));
            }
            m_result.key = group;
        } else {
            m_result.key = parsePackage();
        }
        if (failed()) return;
        if (la(1).type == Tok::At) {
            consume();
            m_result.package = parsePackage();
        }
    }

    // package: ( | ID | KEY_SPECIAL | DOT_PATH)
    QString parsePackage()
    {
        const Token t = la(1);
        if (t.type == Tok::Id || t.type == Tok::KeySpecial || t.type == Tok::DotPath) {
            consume();
            return text(t);
        }
        return QString();
    }

    void parseOptionalValue()
    {
        const Token t = la(1);
        if (failed()) return;
        if (contains(elementFirst(), t.type)) {
            m_value = parseValue();
        } else if (t.type == Tok::Eof) {
            m_value = Value{};  // key= : the empty string
        } else {
            TokSet expected = elementFirst();
            expected.push_back(Tok::Eof);
            mismatch(expected, false);
        }
    }

    // value: element | simpleChoiceSweep;  simpleChoiceSweep: element (COMMA element)+
    Value parseValue()
    {
        const Token first = la(1);
        const bool nested = first.type == Tok::BracketOpen || first.type == Tok::BraceOpen
                            || (first.type == Tok::Id && la(2).type == Tok::POpen);
        if (nested) m_predictFrom = first.start;
        Value v = parseElement();
        m_predictFrom = -1;
        if (failed() || la(1).type != Tok::Comma) return v;
        int count = 1;
        while (la(1).type == Tok::Comma) {
            consume();
            const Token t = la(1);
            if (failed()) return v;
            if (!contains(elementFirst(), t.type)) {
                mismatch(elementFirst(), false);
                return v;
            }
            parseElement();
            if (failed()) return v;
            ++count;
        }
        m_simpleChoice = count;
        Value sweep;
        sweep.kind = Value::Kind::Sweep;
        sweep.text = QStringLiteral("choice");
        return sweep;
    }

    // element: primitive | listContainer | dictContainer | function
    Value parseElement()
    {
        const Token t = la(1);
        if (failed()) return {};
        // Each level is a few C++ frames here; Hydra's Python parser stops with a RecursionError
        // somewhere between 300 and 500 levels, so nothing deeper can run anyway.
        if (m_depth >= MaxDepth) {
            fail(Problem::Syntax, QStringLiteral("lists, dicts and calls nested more than %1 deep").arg(MaxDepth), t.start);
            return {};
        }
        ++m_depth;
        Value v = parseElementAt(t);
        --m_depth;
        return v;
    }

    Value parseElementAt(const Token &t)
    {
        if (t.type == Tok::Id && la(2).type == Tok::POpen) return parseFunction();
        if (failed()) return {};
        if (t.type == Tok::QuotedValue) {
            consume();
            return Value{Value::Kind::Str, unquote(text(t)), {}};
        }
        if (contains(PrimitiveToks, t.type)) return parsePrimitive(PrimitiveToks);
        if (t.type == Tok::BracketOpen) return parseList();
        if (t.type == Tok::BraceOpen) return parseDict();
        noViable(t.start, t);
        return {};
    }

    // primitive's (ID | NULL | ... | WS)+, or dictKey's; evaluated as Hydra's _createPrimitive.
    Value parsePrimitive(const TokSet &allowed)
    {
        std::vector<Token> parts;
        while (contains(allowed, la(1).type)) {
            parts.push_back(la(1));
            consume();
        }
        if (failed() || parts.empty()) return {};
        // Leading and trailing whitespace is dropped; only whitespace is refused.
        size_t first = 0;
        size_t last = parts.size();
        if (parts.front().type == Tok::Ws) {
            if (parts.size() == 1) {
                defer(Problem::Syntax,
                      Text::tr("Hydra cannot parse \"%1\": Trying to parse a primitive that is all whitespaces (character %2; quote it).")
                          .arg(m_text, QString::number(parts.front().start + 1)),
                      parts.front().start);
                return {};
            }
            first = 1;
        }
        if (parts.back().type == Tok::Ws) --last;
        auto unescape = [this](const Token &t) {
            const QString s = text(t);
            if (t.type != Tok::Esc) return s;
            QString out;
            for (int i = 1; i < s.size(); i += 2) out += s.at(i);
            return out;
        };
        if (last - first > 1) {
            QString s;
            for (size_t i = first; i < last; ++i) s += unescape(parts.at(i));
            return Value{Value::Kind::Str, s, {}};
        }
        const Token &t = parts.at(first);
        switch (t.type) {
        case Tok::Int: return Value{Value::Kind::Int, text(t), {}};
        case Tok::Float: return Value{Value::Kind::Float, text(t), {}};
        case Tok::Bool: return Value{Value::Kind::Bool, text(t), {}};
        case Tok::Null: return Value{Value::Kind::Null, text(t), {}};
        default: return Value{Value::Kind::Str, unescape(t), {}};
        }
    }

    // listContainer: BRACKET_OPEN (element (COMMA element)*)? BRACKET_CLOSE
    Value parseList()
    {
        consume();
        Value list;
        list.kind = Value::Kind::List;
        if (la(1).type != Tok::BracketClose) {
            if (failed()) return list;
            if (!contains(elementFirst(), la(1).type)) {
                TokSet expected = elementFirst();
                expected.push_back(Tok::BracketClose);
                mismatch(expected, false);
                return list;
            }
            list.items.push_back(parseElement());
            while (!failed() && la(1).type == Tok::Comma) {
                consume();
                list.items.push_back(parseElement());
            }
            if (failed()) return list;
            if (la(1).type != Tok::BracketClose) {
                mismatch({Tok::Comma, Tok::BracketClose}, false);
                return list;
            }
        }
        consume();
        return list;
    }

    // dictContainer: BRACE_OPEN (dictKeyValuePair (COMMA dictKeyValuePair)*)? BRACE_CLOSE
    Value parseDict()
    {
        consume();
        Value dict;
        dict.kind = Value::Kind::Dict;
        if (la(1).type != Tok::BraceClose) {
            if (failed()) return dict;
            parsePair(&dict);
            while (!failed() && la(1).type == Tok::Comma) {
                consume();
                parsePair(&dict);
            }
            if (failed()) return dict;
            if (la(1).type != Tok::BraceClose) {
                mismatch({Tok::Comma, Tok::BraceClose}, false);
                return dict;
            }
        }
        consume();
        return dict;
    }

    // dictKeyValuePair: dictKey COLON element
    void parsePair(Value *dict)
    {
        const Token t = la(1);
        if (failed()) return;
        if (!contains(DictKeyToks, t.type)) {
            noViable(t.start, t);
            return;
        }
        parsePrimitive(DictKeyToks);
        if (failed()) return;
        if (!match(Tok::Colon, contains(elementFirst(), la(1).type))) return;
        dict->items.push_back(parseElement());
    }

    // function: ID POPEN (argName? element (COMMA argName? element)*)? PCLOSE;  argName: ID EQUAL
    Value parseFunction()
    {
        const Token nameTok = la(1);
        const QString name = text(nameTok);
        consume();  // ID
        consume();  // POPEN
        std::vector<Value> args;
        std::vector<std::pair<QString, Value>> kwargs;
        bool positionalAfterKeyword = false;
        if (la(1).type != Tok::PClose) {
            for (;;) {
                if (failed()) return {};
                if (la(1).type == Tok::Id && la(2).type == Tok::Equal) {
                    const QString arg = text(la(1));
                    consume();
                    consume();
                    kwargs.emplace_back(arg, parseElement());
                } else {
                    if (failed()) return {};
                    if (!contains(elementFirst(), la(1).type)) {
                        noViable(la(1).start, la(1));
                        return {};
                    }
                    if (!kwargs.empty()) positionalAfterKeyword = true;
                    args.push_back(parseElement());
                }
                if (failed()) return {};
                if (la(1).type != Tok::Comma) break;
                consume();
            }
            if (failed()) return {};
            if (la(1).type != Tok::PClose) {
                mismatch({Tok::Comma, Tok::PClose}, false);
                return {};
            }
        }
        const int end = la(1).end;
        consume();  // PCLOSE
        // What ANTLR's getText() gives: the tokens' text, which is the line's text here.
        const QString call = text(nameTok.start, end);
        if (positionalAfterKeyword) {
            defer(Problem::Function, functionMessage(QStringLiteral("positional argument follows keyword argument"), nameTok.start), nameTok.start);
            return {};
        }
        return evaluate(name, call, args, kwargs, nameTok.start);
    }

    QString functionMessage(const QString &detail, int at) const
    {
        // Hydra reports these as "Error parsing override" too: it evaluates functions while parsing.
        return Text::tr("Hydra cannot parse \"%1\": %2 (character %3; %4).").arg(m_text, detail, QString::number(at + 1), hint(at));
    }

    void functionError(const QString &call, const QString &type, const QString &detail, int at)
    {
        defer(Problem::Function, functionMessage(QStringLiteral("%1 while evaluating '%2': %3").arg(type, call, detail), at), at);
    }

    // The functions Hydra 1.3 registers (overrides_parser.create_functions), bound as Python
    // binds their signatures, evaluated to the kind of value they give.
    Value evaluate(const QString &name, const QString &call, const std::vector<Value> &args,
                   const std::vector<std::pair<QString, Value>> &kwargs, int at)
    {
        struct Signature
        {
            QStringList params;     // positional-or-keyword, in order
            int required = 0;       // how many of them have no default
            bool varArgs = false;   // *args first; then params are keyword-only
        };
        static const QList<std::pair<QString, Signature>> signatures{
            {QStringLiteral("bool"), {{QStringLiteral("value")}, 0, true}},
            {QStringLiteral("choice"), {{}, 0, true}},
            {QStringLiteral("float"), {{QStringLiteral("value")}, 0, true}},
            {QStringLiteral("glob"), {{QStringLiteral("include"), QStringLiteral("exclude")}, 1, false}},
            {QStringLiteral("int"), {{QStringLiteral("value")}, 0, true}},
            {QStringLiteral("interval"), {{QStringLiteral("start"), QStringLiteral("end")}, 2, false}},
            {QStringLiteral("range"), {{QStringLiteral("start"), QStringLiteral("stop"), QStringLiteral("step")}, 1, false}},
            {QStringLiteral("shuffle"), {{QStringLiteral("sweep"), QStringLiteral("list")}, 0, true}},
            {QStringLiteral("sort"), {{QStringLiteral("sweep"), QStringLiteral("list"), QStringLiteral("reverse")}, 0, true}},
            {QStringLiteral("str"), {{QStringLiteral("value")}, 0, true}},
            {QStringLiteral("tag"), {{QStringLiteral("sweep")}, 0, true}},
        };
        const auto found = std::find_if(signatures.begin(), signatures.end(), [&](const auto &s) { return s.first == name; });
        if (found == signatures.end()) {
            QStringList names;
            for (const auto &s : signatures) names << s.first;
            functionError(call, QStringLiteral("HydraException"),
                          QStringLiteral("Unknown function '%1', available: %2").arg(name, names.join(QLatin1Char(','))), at);
            return {};
        }
        const Signature &sig = found->second;
        // Python's Signature.bind: the errors it raises, in its order.
        if (!sig.varArgs && args.size() > size_t(sig.params.size())) {
            functionError(call, QStringLiteral("TypeError"), QStringLiteral("too many positional arguments"), at);
            return {};
        }
        QStringList bound;
        if (!sig.varArgs) {
            for (size_t i = 0; i < args.size(); ++i) bound << sig.params.at(qsizetype(i));
        }
        for (const auto &[kw, value] : kwargs) {
            Q_UNUSED(value);
            if (!sig.params.contains(kw)) {
                functionError(call, QStringLiteral("TypeError"), QStringLiteral("got an unexpected keyword argument '%1'").arg(kw), at);
                return {};
            }
            if (bound.contains(kw)) {
                functionError(call, QStringLiteral("TypeError"), QStringLiteral("multiple values for argument '%1'").arg(kw), at);
                return {};
            }
            bound << kw;
        }
        for (qsizetype i = 0; i < sig.required; ++i) {
            if (!bound.contains(sig.params.at(i))) {
                functionError(call, QStringLiteral("TypeError"), QStringLiteral("missing a required argument: '%1'").arg(sig.params.at(i)), at);
                return {};
            }
        }
        auto kwarg = [&](const QString &key) -> const Value * {
            for (const auto &[k, v] : kwargs) {
                if (k == key) return &v;
            }
            return nullptr;
        };
        Value sweep;
        sweep.kind = Value::Kind::Sweep;
        sweep.text = name;

        if (name == QLatin1String("int") || name == QLatin1String("float") || name == QLatin1String("str") || name == QLatin1String("bool")) {
            const Value *value = kwarg(QStringLiteral("value"));
            if (value && !args.empty()) {
                functionError(call, QStringLiteral("TypeError"), QStringLiteral("cannot use both position and named arguments"), at);
                return {};
            }
            if (!value && args.empty()) {
                functionError(call, QStringLiteral("TypeError"), QStringLiteral("No positional args or value specified"), at);
                return {};
            }
            if (args.size() > 1) return sweep;  // int(1,2): a choice sweep, cast
            const Value &v = value ? *value : args.front();
            if (v.kind == Value::Kind::Sweep && v.text == QLatin1String("interval") && (name == QLatin1String("str") || name == QLatin1String("bool"))) {
                functionError(call, QStringLiteral("ValueError"), QStringLiteral("Intervals cannot be cast to %1").arg(name), at);
                return {};
            }
            if (v.kind == Value::Kind::Sweep && v.text == QLatin1String("range") && (name == QLatin1String("str") || name == QLatin1String("bool"))) {
                functionError(call, QStringLiteral("ValueError"), QStringLiteral("Range can only be cast to int or float"), at);
                return {};
            }
            if (holdsSweep(v)) return v.kind == Value::Kind::Sweep ? v : sweep;
            Value out;
            if (auto e = cast(name, v, &out)) {
                functionError(call, e->type, e->message, at);
                return {};
            }
            return out;
        }
        if (name == QLatin1String("choice") && args.empty()) {
            functionError(call, QStringLiteral("ValueError"), QStringLiteral("empty choice is not legal"), at);
            return {};
        }
        if (name == QLatin1String("tag") && args.empty() && !kwarg(QStringLiteral("sweep"))) {
            functionError(call, QStringLiteral("ValueError"), QStringLiteral("Not enough arguments to tag, must take at least a sweep"), at);
            return {};
        }
        if (name == QLatin1String("sort") || name == QLatin1String("shuffle")) {
            // A list in gives a list out; several values or a sweep give a sweep.
            if (const Value *list = kwarg(QStringLiteral("list"))) return *list;
            if (kwarg(QStringLiteral("sweep"))) return sweep;
            if (args.size() == 1) {
                const Value &only = args.front();
                if (only.kind == Value::Kind::Sweep || only.kind == Value::Kind::List) return only;
                if (name == QLatin1String("shuffle")) return Value{Value::Kind::List, QString(), {only}};
                return only;
            }
            if (args.empty() && name == QLatin1String("sort")) {
                functionError(call, QStringLiteral("ValueError"), QStringLiteral("empty sort input"), at);
                return {};
            }
            return sweep;
        }
        return sweep;  // choice, range, interval, glob, tag
    }

    void checkSweep()
    {
        if (m_simpleChoice > 0) {
            const QString value = m_text.mid(valueStart()).trimmed();
            int eq = valueStart();
            while (eq > 0 && m_text.at(eq - 1) != QLatin1Char('=')) --eq;
            const QString key = m_text.left(eq);
            m_result.problem = Problem::Sweep;
            m_result.message = Text::tr("\"%1\" is a sweep over %2 values (Hydra: Ambiguous value for argument '%1'); sweeps are for --multirun "
                                  "and a job runs once: for a list write %3[%4], for a string quote it: %3%5.")
                                   .arg(m_text, QString::number(m_simpleChoice), key, value, HydraOverride::quoted(value));
        } else if (m_value.kind == Value::Kind::Sweep) {
            m_result.problem = Problem::Sweep;
            m_result.message = Text::tr("\"%1\" is a sweep (%2; Hydra: Sweep parameters '%1' requires --multirun); sweeps are for --multirun "
                                  "and a job runs once: give one value.")
                                   .arg(m_text, m_value.text);
        } else if (holdsSweep(m_value)) {
            m_result.problem = Problem::Sweep;
            m_result.message = Text::tr("\"%1\" holds a sweep inside a list or dict; sweeps are for --multirun and a job runs once: give one value.")
                                   .arg(m_text);
        }
    }

    const QString &m_text;
    const Lexer &m_lexer;
    size_t m_pos = 0;
    HydraOverride m_result;
    std::optional<Deferred> m_deferred;
    Value m_value;
    int m_simpleChoice = 0;
    int m_depth = 0;
    static constexpr int MaxDepth = 300;
    int m_predictFrom = -1;  // where the value starts while ANTLR would still be predicting; -1 after  // how many values a=v1,v2,... gives; 0 for one value
};

} // namespace

HydraOverride HydraOverride::parse(const QString &text)
{
    Lexer lexer(text);
    lexer.run();
    return Parser(text, lexer).run();
}

std::optional<QString> HydraOverride::check(const QString &text)
{
    HydraOverride o = parse(text);
    if (o.ok()) return std::nullopt;
    return o.message;
}

QString HydraOverride::quoted(const QString &value)
{
    const QChar q = value.contains(QLatin1Char('\'')) && !value.contains(QLatin1Char('"')) ? QLatin1Char('"') : QLatin1Char('\'');
    QString out(q);
    int backslashes = 0;
    for (QChar c : value) {
        if (c == QLatin1Char('\\')) {
            ++backslashes;
            continue;
        }
        if (c == q) {
            // n backslashes then a quote: 2n+1 backslashes, so the quote stays inside.
            out += QString(2 * backslashes + 1, QLatin1Char('\\'));
        } else {
            out += QString(backslashes, QLatin1Char('\\'));
        }
        backslashes = 0;
        out += c;
    }
    // Backslashes before the closing quote are doubled, so it still closes.
    out += QString(2 * backslashes, QLatin1Char('\\'));
    out += q;
    return out;
}

} // namespace Starforge::Job
