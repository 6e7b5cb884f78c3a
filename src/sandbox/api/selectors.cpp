#include "sandbox/api/selectors.h"


#include <QRegularExpression>

namespace Starforge::Sandbox {

namespace {

bool isIdentifierChar(QChar c)
{
    return c.isLetterOrNumber() || c == u'.' || c == u'_' || c == u'-' || c == u'/';
}

struct Token
{
    enum Kind { Identifier, Not, Equals, DoubleEquals, NotEquals, Open, Close, Comma, Greater, Less, In, NotIn, End, Bad };
    Kind kind;
    QString text;
};

class Lexer
{
public:
    explicit Lexer(const QString &text) : m_text(text) {}

    Token next()
    {
        while (m_pos < m_text.size() && m_text.at(m_pos).isSpace()) {
            ++m_pos;
        }
        if (m_pos >= m_text.size()) {
            return {Token::End, {}};
        }
        const QChar c = m_text.at(m_pos);
        const auto two = m_text.mid(m_pos, 2);
        if (two == QLatin1String("==")) {
            m_pos += 2;
            return {Token::DoubleEquals, two};
        }
        if (two == QLatin1String("!=")) {
            m_pos += 2;
            return {Token::NotEquals, two};
        }
        switch (c.unicode()) {
        case '!': ++m_pos; return {Token::Not, QStringLiteral("!")};
        case '=': ++m_pos; return {Token::Equals, QStringLiteral("=")};
        case '(': ++m_pos; return {Token::Open, QStringLiteral("(")};
        case ')': ++m_pos; return {Token::Close, QStringLiteral(")")};
        case ',': ++m_pos; return {Token::Comma, QStringLiteral(",")};
        case '>': ++m_pos; return {Token::Greater, QStringLiteral(">")};
        case '<': ++m_pos; return {Token::Less, QStringLiteral("<")};
        default: break;
        }
        if (!isIdentifierChar(c)) {
            ++m_pos;
            return {Token::Bad, QString(c)};
        }
        const qsizetype start = m_pos;
        while (m_pos < m_text.size() && isIdentifierChar(m_text.at(m_pos))) {
            ++m_pos;
        }
        const QString word = m_text.mid(start, m_pos - start);
        if (word == QLatin1String("in")) {
            return {Token::In, word};
        }
        if (word == QLatin1String("notin")) {
            return {Token::NotIn, word};
        }
        return {Token::Identifier, word};
    }

    Token peek()
    {
        const qsizetype saved = m_pos;
        Token t = next();
        m_pos = saved;
        return t;
    }

private:
    QString m_text;
    qsizetype m_pos = 0;
};

// A label key: [DNS-1123 subdomain prefix '/'] name of at most 63 characters.
std::optional<QString> keyProblem(const QString &key)
{
    static const QRegularExpression name(QStringLiteral("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$"));
    const QStringList parts = key.split(u'/');
    const QString local = parts.last();
    if (parts.size() > 2 || local.isEmpty() || local.size() > 63 || !name.match(local).hasMatch()) {
        return QStringLiteral("key: Invalid value: \"%1\": name part must consist of alphanumeric characters, '-', '_' or "
                              "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
                              "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
            .arg(key);
    }
    return std::nullopt;
}

std::optional<QString> valueProblem(const QString &value)
{
    static const QRegularExpression valid(QStringLiteral("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"));
    if (value.size() > 63 || !valid.match(value).hasMatch()) {
        return QStringLiteral("values[0]: Invalid value: \"%1\": a valid label must be an empty string or consist of "
                              "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                              "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                              "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
            .arg(value);
    }
    return std::nullopt;
}

Error parseError(const QString &detail)
{
    return Error::invalid(QStringLiteral("unable to parse requirement: %1").arg(detail));
}

} // namespace

Result<LabelSelector> LabelSelector::parse(const QString &text)
{
    LabelSelector selector;
    Lexer lexer(text);
    if (lexer.peek().kind == Token::End) {
        return selector;
    }
    for (;;) {
        Requirement r;
        Token t = lexer.next();
        if (t.kind == Token::Not) {
            const Token key = lexer.next();
            if (key.kind != Token::Identifier) {
                return parseError(QStringLiteral("found '%1', expected: identifier after '!'").arg(key.text));
            }
            r = {key.text, Op::DoesNotExist, {}};
        } else if (t.kind == Token::Identifier) {
            r.key = t.text;
            const Token op = lexer.peek();
            switch (op.kind) {
            case Token::Comma:
            case Token::End:
                r.op = Op::Exists;
                break;
            case Token::Equals:
            case Token::DoubleEquals:
            case Token::NotEquals:
            case Token::Greater:
            case Token::Less: {
                lexer.next();
                r.op = op.kind == Token::NotEquals ? Op::NotEquals
                     : op.kind == Token::Greater  ? Op::GreaterThan
                     : op.kind == Token::Less     ? Op::LessThan
                                                  : Op::Equals;
                const Token value = lexer.peek();
                if (value.kind == Token::Identifier) {
                    lexer.next();
                    r.values << value.text;
                } else if (value.kind == Token::Comma || value.kind == Token::End) {
                    r.values << QString(); // key= means the empty value
                } else {
                    return parseError(QStringLiteral("found '%1', expected: identifier").arg(value.text));
                }
                if (r.op == Op::GreaterThan || r.op == Op::LessThan) {
                    bool ok = false;
                    r.values.first().toLongLong(&ok);
                    if (!ok) {
                        return parseError(QStringLiteral("for 'Gt', 'Lt' operators, the value must be an integer"));
                    }
                }
                break;
            }
            case Token::In:
            case Token::NotIn: {
                lexer.next();
                r.op = op.kind == Token::In ? Op::In : Op::NotIn;
                if (lexer.next().kind != Token::Open) {
                    return parseError(QStringLiteral("found '%1', expected: '('").arg(op.text));
                }
                for (;;) {
                    const Token value = lexer.next();
                    if (value.kind == Token::Identifier) {
                        r.values << value.text;
                        const Token sep = lexer.next();
                        if (sep.kind == Token::Close) {
                            break;
                        }
                        if (sep.kind != Token::Comma) {
                            return parseError(QStringLiteral("found '%1', expected: ',' or ')'").arg(sep.text));
                        }
                    } else if (value.kind == Token::Close && r.values.isEmpty()) {
                        return parseError(QStringLiteral("for 'in', 'notin' operators, values set can't be empty"));
                    } else if (value.kind == Token::Comma || value.kind == Token::Close) {
                        r.values << QString();
                        if (value.kind == Token::Close) {
                            break;
                        }
                    } else {
                        return parseError(QStringLiteral("found '%1', expected: ',', ')' or identifier").arg(value.text));
                    }
                }
                break;
            }
            default:
                return parseError(QStringLiteral("found '%1', expected: in, notin, =, ==, !=, gt, lt").arg(op.text));
            }
        } else {
            return parseError(QStringLiteral("found '%1', expected: !, identifier, or 'end of string'").arg(t.text));
        }
        if (const auto problem = keyProblem(r.key)) {
            return parseError(*problem);
        }
        for (const QString &v : std::as_const(r.values)) {
            if (const auto problem = valueProblem(v)) {
                return parseError(*problem);
            }
        }
        selector.m_requirements << r;
        const Token sep = lexer.next();
        if (sep.kind == Token::End) {
            break;
        }
        if (sep.kind != Token::Comma) {
            return parseError(QStringLiteral("found '%1', expected: ',' or 'end of string'").arg(sep.text));
        }
    }
    return selector;
}

bool LabelSelector::matches(const QJsonObject &labels) const
{
    for (const Requirement &r : m_requirements) {
        const bool has = labels.contains(r.key);
        const QString value = labels.value(r.key).toString();
        switch (r.op) {
        case Op::Equals:
            if (!has || value != r.values.first()) return false;
            break;
        case Op::NotEquals:
            if (has && value == r.values.first()) return false;
            break;
        case Op::In:
            if (!has || !r.values.contains(value)) return false;
            break;
        case Op::NotIn:
            if (has && r.values.contains(value)) return false;
            break;
        case Op::Exists:
            if (!has) return false;
            break;
        case Op::DoesNotExist:
            if (has) return false;
            break;
        case Op::GreaterThan:
        case Op::LessThan: {
            bool ok = false;
            const qint64 n = value.toLongLong(&ok);
            const qint64 bound = r.values.first().toLongLong();
            if (!has || !ok || (r.op == Op::GreaterThan ? n <= bound : n >= bound)) return false;
            break;
        }
        }
    }
    return true;
}

Result<FieldSelector> FieldSelector::parse(const QString &text)
{
    FieldSelector selector;
    if (text.trimmed().isEmpty()) {
        return selector;
    }
    // Split on unescaped commas, then each term on its first unescaped operator.
    QStringList terms;
    QString current;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c == u'\\' && i + 1 < text.size()) {
            current += c;
            current += text.at(++i);
        } else if (c == u',') {
            terms << current;
            current.clear();
        } else {
            current += c;
        }
    }
    terms << current;
    for (const QString &term : std::as_const(terms)) {
        Requirement r;
        qsizetype opAt = -1;
        int opLength = 0;
        for (qsizetype i = 0; i < term.size(); ++i) {
            if (term.at(i) == u'\\') {
                ++i;
                continue;
            }
            if (term.mid(i, 2) == QLatin1String("!=")) {
                opAt = i; opLength = 2; r.equals = false;
                break;
            }
            if (term.mid(i, 2) == QLatin1String("==")) {
                opAt = i; opLength = 2;
                break;
            }
            if (term.at(i) == u'=') {
                opAt = i; opLength = 1;
                break;
            }
        }
        if (opAt <= 0) {
            return Error::invalid(QStringLiteral("invalid selector: '%1'; can't understand '%2'").arg(text, term));
        }
        r.field = term.left(opAt).trimmed();
        QString raw = term.mid(opAt + opLength);
        QString value;
        for (qsizetype i = 0; i < raw.size(); ++i) {
            if (raw.at(i) == u'\\' && i + 1 < raw.size()) {
                value += raw.at(++i);
            } else if (raw.at(i) == u'=' || raw.at(i) == u'!') {
                return Error::invalid(QStringLiteral("invalid selector: '%1'; can't understand '%2'").arg(text, term));
            } else {
                value += raw.at(i);
            }
        }
        r.value = value;
        selector.m_requirements << r;
    }
    return selector;
}

Result<void> FieldSelector::check(const std::function<bool(const QString &)> &supported) const
{
    for (const Requirement &r : m_requirements) {
        if (!supported(r.field)) {
            return Error::invalid(QStringLiteral("field label not supported: %1").arg(r.field));
        }
    }
    return {};
}

bool FieldSelector::matches(const std::function<std::optional<QString>(const QString &)> &valueOf) const
{
    for (const Requirement &r : m_requirements) {
        const QString value = valueOf(r.field).value_or(QString());
        if ((value == r.value) != r.equals) {
            return false;
        }
    }
    return true;
}

std::optional<QString> FieldSelector::exactName() const
{
    if (m_requirements.size() == 1 && m_requirements.first().equals
        && m_requirements.first().field == QLatin1String("metadata.name")) {
        return m_requirements.first().value;
    }
    return std::nullopt;
}

} // namespace Starforge::Sandbox
