// SPDX-License-Identifier: GPL-3.0-or-later
#include "prometheustext.h"

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

namespace slp {

namespace {

bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}

bool isNameStart(char c, bool colonOk)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colonOk && c == ':');
}

bool isNameChar(char c, bool colonOk)
{
    return isNameStart(c, colonOk) || (c >= '0' && c <= '9');
}

// Go's strconv.ParseFloat as the Prometheus parser uses it, minus hex floats and underscores.
std::optional<double> parseValue(QByteArrayView tok)
{
    if (tok.isEmpty())
        return std::nullopt;
    QByteArrayView body = tok;
    bool neg = false;
    if (body.front() == '+' || body.front() == '-') {
        neg = body.front() == '-';
        body = body.sliced(1);
    }
    const QByteArray lower = body.toByteArray().toLower();
    if (lower == "inf" || lower == "infinity")
        return neg ? -HUGE_VAL : HUGE_VAL;
    if (lower == "nan")
        return std::nan("");
    if (body.isEmpty() || !(std::isdigit(uchar(body.front())) || body.front() == '.'))
        return std::nullopt;
    double d = 0;
    const auto res =
        std::from_chars(body.data(), body.data() + body.size(), d, std::chars_format::general);
    if (res.ptr != body.data() + body.size())
        return std::nullopt;
    if (res.ec == std::errc::result_out_of_range) {
        // Go returns ±Inf (or 0 on underflow) with an error; the exposition never writes that.
        return std::nullopt;
    }
    if (res.ec != std::errc())
        return std::nullopt;
    return neg ? -d : d;
}

class LineParser
{
public:
    LineParser(QByteArrayView line) : m_s(line) {}

    void skipBlanks()
    {
        while (m_i < m_s.size() && isBlank(m_s[m_i]))
            ++m_i;
    }
    bool atEnd() const { return m_i >= m_s.size(); }
    char peek() const { return m_s[m_i]; }
    QByteArrayView rest() const { return m_s.sliced(m_i); }

    QByteArrayView name(bool colonOk)
    {
        const qsizetype b = m_i;
        if (m_i < m_s.size() && isNameStart(m_s[m_i], colonOk)) {
            ++m_i;
            while (m_i < m_s.size() && isNameChar(m_s[m_i], colonOk))
                ++m_i;
        }
        return m_s.sliced(b, m_i - b);
    }

    QByteArrayView token()
    {
        const qsizetype b = m_i;
        while (m_i < m_s.size() && !isBlank(m_s[m_i]))
            ++m_i;
        return m_s.sliced(b, m_i - b);
    }

    // After the opening quote; reads to the closing one, unescaping \\ \" \n.
    bool labelValue(QString *out, QString *error)
    {
        QByteArray raw;
        while (m_i < m_s.size()) {
            const char c = m_s[m_i++];
            if (c == '"') {
                *out = QString::fromUtf8(raw);
                return true;
            }
            if (c == '\\') {
                if (m_i >= m_s.size())
                    break;
                const char e = m_s[m_i++];
                if (e == '\\')
                    raw += '\\';
                else if (e == '"')
                    raw += '"';
                else if (e == 'n')
                    raw += '\n';
                else {
                    *error = QStringLiteral("invalid escape sequence '\\%1' in label value")
                                 .arg(QLatin1Char(e));
                    return false;
                }
                continue;
            }
            raw += c;
        }
        *error = QStringLiteral("unterminated label value");
        return false;
    }

    bool expect(char c)
    {
        if (m_i < m_s.size() && m_s[m_i] == c) {
            ++m_i;
            return true;
        }
        return false;
    }

private:
    QByteArrayView m_s;
    qsizetype m_i = 0;
};

// HELP text escapes: \\ and \n only.
bool unescapeHelp(QByteArrayView s, QString *out, QString *error)
{
    QByteArray raw;
    for (qsizetype i = 0; i < s.size(); ++i) {
        if (s[i] != '\\') {
            raw += s[i];
            continue;
        }
        if (i + 1 >= s.size()) {
            *error = QStringLiteral("HELP text ends with a lone backslash");
            return false;
        }
        const char e = s[++i];
        if (e == '\\')
            raw += '\\';
        else if (e == 'n')
            raw += '\n';
        else {
            *error =
                QStringLiteral("invalid escape sequence '\\%1' in HELP text").arg(QLatin1Char(e));
            return false;
        }
    }
    *out = QString::fromUtf8(raw);
    return true;
}

bool parseComment(LineParser &p, PromParseResult &r, QString *error)
{
    // p is just past '#'.
    p.skipBlanks();
    const QByteArrayView keyword = p.token();
    if (keyword != "HELP" && keyword != "TYPE")
        return true; // an ordinary comment
    p.skipBlanks();
    const QByteArrayView name = p.name(true);
    if (name.isEmpty() || (!p.atEnd() && !isBlank(p.peek()))) {
        *error = QStringLiteral("invalid metric name in %1 line").arg(QLatin1String(keyword));
        return false;
    }
    const QString family = QString::fromLatin1(name);
    PromFamily &f = r.families[family];
    f.name = family;
    if (keyword == "HELP") {
        if (!f.help.isNull()) {
            *error = QStringLiteral("second HELP line for %1").arg(family);
            return false;
        }
        // Blanks between the name and the text are dropped, as Prometheus's parser does.
        p.skipBlanks();
        QString help;
        if (!unescapeHelp(p.rest(), &help, error))
            return false;
        f.help = help.isNull() ? QLatin1String("") : help;
    } else {
        if (!f.type.isEmpty()) {
            *error = QStringLiteral("second TYPE line for %1").arg(family);
            return false;
        }
        p.skipBlanks();
        const QByteArrayView type = p.token();
        p.skipBlanks();
        static const char *const types[] = {"counter", "gauge", "histogram", "summary", "untyped"};
        bool known = false;
        for (const char *t : types)
            known = known || type == t;
        if (!known || !p.atEnd()) {
            *error = QStringLiteral("unknown metric type '%1'")
                         .arg(QString::fromUtf8(type.toByteArray()));
            return false;
        }
        f.type = QString::fromLatin1(type);
    }
    return true;
}

// One `name="value"` of a label set; false with `error` set.
bool parseLabel(LineParser &p, PromSample &s, QString *error)
{
    const QByteArrayView label = p.name(false);
    if (label.isEmpty()) {
        *error = QStringLiteral("invalid label name");
        return false;
    }
    p.skipBlanks();
    if (!p.expect('=')) {
        *error = QStringLiteral("expected '=' after label name %1").arg(QLatin1String(label));
        return false;
    }
    p.skipBlanks();
    if (!p.expect('"')) {
        *error = QStringLiteral("expected '\"' to start the value of label %1")
                     .arg(QLatin1String(label));
        return false;
    }
    QString value;
    if (!p.labelValue(&value, error))
        return false;
    const QString labelName = QString::fromLatin1(label);
    for (const auto &l : std::as_const(s.labels)) {
        if (l.first == labelName) {
            *error = QStringLiteral("duplicate label %1").arg(labelName);
            return false;
        }
    }
    s.labels.append({labelName, value});
    return true;
}

// The `{...}` after a sample's name, when there is one.
bool parseLabels(LineParser &p, PromSample &s, QString *error)
{
    if (!p.expect('{'))
        return true;
    for (;;) {
        p.skipBlanks();
        if (p.expect('}'))
            break;
        if (!parseLabel(p, s, error))
            return false;
        p.skipBlanks();
        if (p.expect(','))
            continue; // a trailing comma before '}' is allowed
        if (p.expect('}'))
            break;
        *error = QStringLiteral("expected ',' or '}' after label value");
        return false;
    }
    p.skipBlanks();
    return true;
}

// The value and the optional timestamp that end a sample line.
bool parseValueAndTimestamp(LineParser &p, PromSample &s, QString *error)
{
    if (p.atEnd()) {
        *error = QStringLiteral("missing value for %1").arg(s.name);
        return false;
    }
    const QByteArrayView valueTok = p.token();
    const auto value = parseValue(valueTok);
    if (!value) {
        *error =
            QStringLiteral("invalid value '%1'").arg(QString::fromUtf8(valueTok.toByteArray()));
        return false;
    }
    s.value = *value;
    p.skipBlanks();
    if (p.atEnd())
        return true;
    const QByteArrayView tsTok = p.token();
    qint64 ts = 0;
    const auto res = std::from_chars(tsTok.data(), tsTok.data() + tsTok.size(), ts);
    if (res.ec != std::errc() || res.ptr != tsTok.data() + tsTok.size()) {
        *error =
            QStringLiteral("invalid timestamp '%1'").arg(QString::fromUtf8(tsTok.toByteArray()));
        return false;
    }
    s.timestampMs = ts;
    p.skipBlanks();
    if (!p.atEnd()) {
        *error = QStringLiteral("unexpected text after timestamp");
        return false;
    }
    return true;
}

bool parseSample(LineParser &p, PromParseResult &r, QString *error)
{
    PromSample s;
    const QByteArrayView name = p.name(true);
    if (name.isEmpty()) {
        *error = QStringLiteral("invalid metric name");
        return false;
    }
    s.name = QString::fromLatin1(name);
    p.skipBlanks();
    if (!parseLabels(p, s, error) || !parseValueAndTimestamp(p, s, error))
        return false;
    r.samples.append(std::move(s));
    return true;
}

} // namespace

PromParseResult parsePromText(const QByteArray &text)
{
    PromParseResult r;
    qsizetype start = 0;
    int lineNo = 0;
    while (start < text.size()) {
        qsizetype end = text.indexOf('\n', start);
        if (end < 0)
            end = text.size();
        ++lineNo;
        QByteArrayView line(text.constData() + start, end - start);
        start = end + 1;
        if (line.endsWith('\r')) // tolerated: some proxies rewrite line ends
            line.chop(1);

        LineParser p(line);
        p.skipBlanks();
        if (p.atEnd())
            continue;
        QString error;
        const bool ok = p.expect('#') ? parseComment(p, r, &error) : parseSample(p, r, &error);
        if (!ok) {
            r.errorLine = lineNo;
            r.error = QStringLiteral("line %1: %2").arg(lineNo).arg(error);
            break;
        }
    }
    for (PromFamily &f : r.families)
        if (f.type.isEmpty()) // HELP without TYPE
            f.type = QStringLiteral("untyped");
    return r;
}

std::optional<double> findPromSample(const QList<PromSample> &samples, const QString &name,
                                     const PromLabels &match)
{
    for (const PromSample &s : samples) {
        if (s.name != name)
            continue;
        bool all = true;
        for (const auto &m : match) {
            if (!s.labels.contains(m)) {
                all = false;
                break;
            }
        }
        if (all)
            return s.value;
    }
    return std::nullopt;
}

} // namespace slp
