// SPDX-License-Identifier: GPL-3.0-or-later
// A route's `headers:`: request headers SLP sets on every request to the route. The values
// are often keys: no message here ever quotes one, only the header's name and the variables.
#include "config/compiler.h"
#include "config/diagnostics.h"
#include "httpfield.h"

#include <QRegularExpression>

namespace slp::configc {

namespace {

constexpr auto kEnvHint = "set it in /etc/slp/slp.env (the systemd unit reads it) or in the "
                          "environment slp starts with; write $$ for a literal $";

// Why SLP cannot set header `name` for a route, or nullptr when it can.
const char *refusedName(QByteArrayView name)
{
    const auto is = [name](QByteArrayView other) {
        return name.compare(other, Qt::CaseInsensitive) == 0;
    };
    if (isHopByHopHeader(name))
        return "is hop-by-hop: it describes one connection and is never forwarded";
    if (is("host"))
        return "is the backend's own: SLP sends the host of the route's url";
    if (is("content-length"))
        return "frames the body, which SLP does itself";
    if (is("content-type") || is("content-encoding"))
        return "would make the backend read the body otherwise than SLP routed it";
    if (is("expect"))
        return "is answered by SLP, never forwarded";
    if (is("x-request-id"))
        return "is SLP's own: it sends its request id in it";
    if (name.size() > 14 &&
        QByteArrayView(name.first(14)).compare("sec-websocket-", Qt::CaseInsensitive) == 0)
        return "belongs to the client's WebSocket handshake";
    return nullptr;
}

// What a value holds that HTTP cannot carry as written, or nullptr.
const char *badValue(const QByteArray &value)
{
    if (value.isEmpty())
        return "is empty";
    for (const char c : value) {
        if ((uchar(c) < 0x20 && c != '\t') || c == 0x7f)
            return "holds a control character (a line break?), which HTTP cannot carry";
        if (uchar(c) >= 0x80)
            return "holds a non-ASCII character, which backends read differently";
    }
    if (value.front() == ' ' || value.front() == '\t' || value.back() == ' ' ||
        value.back() == '\t')
        return "starts or ends with whitespace, which HTTP drops";
    return nullptr;
}

struct Expansion
{
    QString value;
    QStringList variables; // the ${NAME}s read, for messages
};

// `${NAME}` from the compile's environment, `$$` a literal '$', any other '$' itself.
// nullopt (reported at the variable's column) when a variable is unset, empty or misspelled.
std::optional<Expansion> expand(YamlReader &in, const Field &f, const QString &path,
                                const QString &text)
{
    static const QRegularExpression variableName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    Expansion out;
    const int column = in.valueColumnOffset(f.value);
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text[i] != u'$' || i + 1 == text.size() ||
            (text[i + 1] != u'{' && text[i + 1] != u'$')) {
            out.value += text[i];
            continue;
        }
        if (text[i + 1] == u'$') {
            out.value += u'$';
            ++i;
            continue;
        }
        const qsizetype close = text.indexOf(u'}', i + 2);
        const QString name = close < 0 ? QString() : text.mid(i + 2, close - i - 2);
        const auto fail = [&](const QString &what, const QString &hint) {
            in.error(f.mark(), QStringLiteral("%1: %2").arg(path, what), hint, column + int(i));
            return std::nullopt;
        };
        if (close < 0)
            return fail(QStringLiteral("\"${\" has no closing \"}\""), QLatin1String(kEnvHint));
        if (!variableName.match(name).hasMatch())
            return fail(QStringLiteral("${%1} is not a variable name").arg(name.left(40)),
                        QStringLiteral("use letters, digits and _ (not first: a digit), e.g. "
                                       "${VLLM_API_KEY}; write $$ for a literal $"));
        if (!in.environment().contains(name))
            return fail(QStringLiteral("${%1} is not set in SLP's environment").arg(name),
                        QLatin1String(kEnvHint));
        if (in.environment().value(name).isEmpty())
            return fail(QStringLiteral("${%1} is set but empty").arg(name),
                        QLatin1String(kEnvHint));
        out.value += in.environment().value(name);
        out.variables << QStringLiteral("${%1}").arg(name);
        i = close;
    }
    return out;
}

// One `Name: value` pair, checked; false (reported) when it cannot be sent.
bool readHeader(YamlReader &in, const YAML::Node &key, const YAML::Node &value, const QString &path,
                QList<QPair<QByteArray, QByteArray>> &out)
{
    const QByteArray name = QByteArray::fromStdString(key.Scalar());
    const QString keyPath = QStringLiteral("%1.%2").arg(path, QString::fromLatin1(name.left(80)));
    if (!isToken(name)) {
        in.error(key.Mark(),
                 QStringLiteral("%1: %2 is not a header name")
                     .arg(path, goQuote(QString::fromUtf8(name.left(80)))),
                 QStringLiteral("header names are letters, digits and !#$%&'*+-.^_`|~"));
        return false;
    }
    if (const char *why = refusedName(name)) {
        in.error(key.Mark(),
                 QStringLiteral("%1: SLP cannot set %2: it %3")
                     .arg(path, QString::fromLatin1(name), QLatin1String(why)),
                 QStringLiteral("remove it from headers:"));
        return false;
    }
    for (const auto &[seen, unused] : out) {
        if (seen.compare(name, Qt::CaseInsensitive) == 0) {
            in.error(key.Mark(),
                     QStringLiteral("%1: %2 is given twice (names are not case "
                                    "sensitive)")
                         .arg(path, QString::fromLatin1(name)),
                     QStringLiteral("give each header once"));
            return false;
        }
    }
    const Field f{key, value, true};
    const std::optional<QString> text = in.readString(f, keyPath);
    if (!text)
        return false;
    const std::optional<Expansion> expanded = expand(in, f, keyPath, *text);
    if (!expanded)
        return false;
    const QByteArray bytes = expanded->value.toUtf8();
    if (const char *why = badValue(bytes)) {
        const QString source = expanded->variables.isEmpty()
                                   ? QStringLiteral("the value")
                                   : QStringLiteral("the value, with %1 expanded,")
                                         .arg(expanded->variables.join(QStringLiteral(", ")));
        in.error(f.mark(), QStringLiteral("%1: %2 %3").arg(keyPath, source, QLatin1String(why)),
                 QStringLiteral("check the value (SLP never prints it)"));
        return false;
    }
    out.append({name, bytes});
    return true;
}

} // namespace

std::optional<QList<QPair<QByteArray, QByteArray>>> readRouteHeaders(YamlReader &in, const Field &f,
                                                                     const QString &path)
{
    if (!f.value.IsMap()) {
        in.error(
            f.mark(),
            QStringLiteral("%1 must be a mapping of header names to values, not %2")
                .arg(path, f.value.IsScalar() ? QStringLiteral("a single value") : kindOf(f.value)),
            QStringLiteral("write e.g. headers: {Authorization: \"Bearer ${VLLM_API_KEY}\"}"));
        return std::nullopt;
    }
    QList<QPair<QByteArray, QByteArray>> headers;
    bool ok = true;
    for (auto it = f.value.begin(); it != f.value.end(); ++it) {
        if (!it->first.IsScalar()) {
            in.error(it->first.Mark(),
                     QStringLiteral("%1: a header name must be a plain word, not %2")
                         .arg(path, kindOf(it->first)),
                     QStringLiteral("write each header as Name: value"));
            ok = false;
            continue;
        }
        ok = readHeader(in, it->first, it->second, path, headers) && ok;
    }
    if (!ok)
        return std::nullopt;
    return headers;
}

} // namespace slp::configc
