// SPDX-License-Identifier: GPL-3.0-or-later
#include "config/yamlreader.h"

#include "bytesize.h"
#include "config/diagnostics.h"

namespace slp::configc {

namespace {

constexpr auto kDurationHint = "use Go duration syntax such as 300ms, 30s, 2m, 1h30m";
constexpr auto kSizeHint = "use plain bytes or a size such as 512KiB, 64MiB, 1GiB";
constexpr auto kBoolHint = "use true or false";

} // namespace

QString kindOf(const YAML::Node &node)
{
    switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        return QStringLiteral("nothing");
    case YAML::NodeType::Scalar:
        return QStringLiteral("\"%1\"").arg(QString::fromStdString(node.Scalar()));
    case YAML::NodeType::Sequence:
        return QStringLiteral("a list");
    case YAML::NodeType::Map:
        return QStringLiteral("a mapping");
    }
    return QStringLiteral("nothing");
}

void YamlReader::error(const YAML::Mark &mark, const QString &what, const QString &hint,
                       int columnOffset)
{
    ConfigError e;
    e.file = m_file;
    if (!mark.is_null()) {
        e.line = mark.line + 1;
        e.column = mark.column + 1 + columnOffset;
    }
    e.what = what;
    e.hint = hint;
    m_errors.append(e);
}

// 1 when the scalar at `value` starts with a quote, so template columns land on the text.
int YamlReader::valueColumnOffset(const YAML::Node &value) const
{
    const int pos = value.Mark().pos;
    if (pos < 0 || pos >= m_source.size())
        return 0;
    const char c = m_source.at(pos);
    return (c == '"' || c == '\'') ? 1 : 0;
}

QHash<QString, Field> YamlReader::fields(const YAML::Node &map, const QString &path,
                                         const QList<QString> &known)
{
    QHash<QString, Field> out;
    const QString where = path.isEmpty() ? QString() : path + QLatin1Char('.');
    for (auto it = map.begin(); it != map.end(); ++it) {
        const YAML::Node key = it->first;
        if (!key.IsScalar()) {
            error(key.Mark(),
                  QStringLiteral("%1: a key must be a plain word, not %2")
                      .arg(path.isEmpty() ? QStringLiteral("config") : path, kindOf(key)),
                  QStringLiteral("known keys: %1").arg(quoteList(known)));
            continue;
        }
        const QString name = QString::fromStdString(key.Scalar());
        if (!known.contains(name)) {
            error(key.Mark(), QStringLiteral("unknown key \"%1%2\"").arg(where, name),
                  unknownKeyHint(name, known));
            continue;
        }
        if (out.contains(name)) {
            error(key.Mark(),
                  QStringLiteral("duplicate key \"%1%2\" (first given at line %3)")
                      .arg(where, name)
                      .arg(out.value(name).key.Mark().line + 1),
                  QStringLiteral("give each key once"));
            continue;
        }
        out.insert(name, Field{key, it->second, true});
    }
    return out;
}

std::optional<QString> YamlReader::readString(const Field &f, const QString &path)
{
    if (f.value.IsNull()) {
        error(f.mark(), QStringLiteral("%1 is empty").arg(path),
              QStringLiteral("give a value, or remove the key"));
        return std::nullopt;
    }
    if (!f.value.IsScalar()) {
        error(f.mark(), QStringLiteral("%1 must be a string, not %2").arg(path, kindOf(f.value)),
              QStringLiteral("write a single value on the same line as the key"));
        return std::nullopt;
    }
    return QString::fromStdString(f.value.Scalar());
}

std::optional<bool> YamlReader::readBool(const Field &f, const QString &path)
{
    if (f.value.IsScalar()) {
        const QString v = QString::fromStdString(f.value.Scalar());
        const bool plain = f.value.Tag() == "?";
        // YAML 1.2 core schema booleans only: "yes", "on" and "1" are strings, not true.
        if (plain && (v == u"true" || v == u"True" || v == u"TRUE"))
            return true;
        if (plain && (v == u"false" || v == u"False" || v == u"FALSE"))
            return false;
        error(f.mark(), QStringLiteral("%1: \"%2\" is not a boolean").arg(path, v),
              plain ? QString::fromLatin1(kBoolHint)
                    : QStringLiteral("use true or false without quotes"));
        return std::nullopt;
    }
    error(f.mark(), QStringLiteral("%1 must be true or false, not %2").arg(path, kindOf(f.value)),
          QString::fromLatin1(kBoolHint));
    return std::nullopt;
}

std::optional<Nanoseconds> YamlReader::readDuration(const Field &f, const QString &path,
                                                    bool allowZero, QString *written)
{
    if (!f.value.IsScalar()) {
        error(f.mark(), QStringLiteral("%1 must be a duration, not %2").arg(path, kindOf(f.value)),
              QString::fromLatin1(kDurationHint));
        return std::nullopt;
    }
    const QString text = QString::fromStdString(f.value.Scalar()).trimmed();
    QString why;
    const auto d = parseGoDuration(text, &why);
    if (!d) {
        bool isNumber = false;
        text.toDouble(&isNumber);
        error(f.mark(), QStringLiteral("%1: \"%2\" is not a duration: %3").arg(path, text, why),
              isNumber ? QStringLiteral("add a unit, e.g. %1s; %2")
                             .arg(text, QString::fromLatin1(kDurationHint))
                       : QString::fromLatin1(kDurationHint));
        return std::nullopt;
    }
    if (d->count() < 0 || (d->count() == 0 && !allowZero)) {
        error(f.mark(),
              QStringLiteral("%1: %2 must be %3")
                  .arg(path, text,
                       allowZero ? QStringLiteral("zero or more") : QStringLiteral("positive")),
              QStringLiteral("use a positive duration such as 30s"));
        return std::nullopt;
    }
    if (written)
        *written = text;
    return d;
}

std::optional<qint64> YamlReader::readSize(const Field &f, const QString &path)
{
    if (!f.value.IsScalar()) {
        error(f.mark(), QStringLiteral("%1 must be a size, not %2").arg(path, kindOf(f.value)),
              QString::fromLatin1(kSizeHint));
        return std::nullopt;
    }
    const QString text = QString::fromStdString(f.value.Scalar());
    QString why;
    const auto size = parseByteSize(text, &why);
    if (!size) {
        error(f.mark(), QStringLiteral("%1: \"%2\" is not a size: %3").arg(path, text, why),
              QString::fromLatin1(kSizeHint));
        return std::nullopt;
    }
    if (*size <= 0) {
        error(f.mark(), QStringLiteral("%1 must be more than 0 bytes").arg(path),
              QString::fromLatin1(kSizeHint));
        return std::nullopt;
    }
    return size;
}

std::optional<qint64> YamlReader::readInt(const Field &f, const QString &path, qint64 min,
                                          qint64 max, const QString &rangeHint)
{
    if (!f.value.IsScalar() || f.value.Tag() != "?") {
        error(f.mark(),
              QStringLiteral("%1 must be a whole number, not %2").arg(path, kindOf(f.value)),
              QStringLiteral("write a number without quotes, e.g. %1").arg(min));
        return std::nullopt;
    }
    const QString text = QString::fromStdString(f.value.Scalar());
    bool ok = false;
    const qint64 v = text.toLongLong(&ok);
    if (!ok) {
        error(f.mark(), QStringLiteral("%1: \"%2\" is not a whole number").arg(path, text),
              QStringLiteral("write a number without quotes, e.g. %1").arg(min));
        return std::nullopt;
    }
    if (v < min || v > max) {
        error(f.mark(),
              QStringLiteral("%1: %2 is out of range (%3 to %4)").arg(path, text).arg(min).arg(max),
              rangeHint);
        return std::nullopt;
    }
    return v;
}

namespace {
// sockaddr_un's sun_path holds 108 bytes with its NUL on Linux.
constexpr qsizetype kMaxUnixPathBytes = 107;

// "unix:/ABSOLUTE/PATH": the path as written (nothing is resolved, and the file need not
// exist yet: a backend may start after SLP).
std::optional<QString> unixOriginOf(const QString &text, QString *why, QString *hint)
{
    const QString unixHint = QStringLiteral("write the socket's absolute path after \"unix:\", "
                                            "e.g. unix:/run/vllm/vllm.sock");
    const QString path = text.mid(5);
    const auto fail = [&](const QString &w) -> std::optional<QString> {
        *why = w;
        *hint = unixHint;
        return std::nullopt;
    };
    if (path.startsWith(QLatin1String("//")))
        return fail(QStringLiteral("a unix: URL takes a path, not \"//host\""));
    if (!path.startsWith(QLatin1Char('/')))
        return fail(QStringLiteral("the socket path is not absolute"));
    if (path.contains(QLatin1Char('?')) || path.contains(QLatin1Char('#')))
        return fail(QStringLiteral("the URL has a query or fragment"));
    if (path.endsWith(QLatin1Char('/')))
        return fail(QStringLiteral("the socket path names a directory"));
    if (path.toUtf8().size() > kMaxUnixPathBytes)
        return fail(
            QStringLiteral("the socket path is longer than %1 bytes").arg(kMaxUnixPathBytes));
    return QStringLiteral("unix:") + path;
}
} // namespace

// Validates an upstream URL and returns its origin: "scheme://host[:port]", or
// "unix:/PATH" for a backend on a Unix socket.
std::optional<QString> originOf(const QString &text, QString *why, QString *hint)
{
    const QString originHint = QStringLiteral("give the origin only, e.g. http://host:8000");
    const auto fail = [&](const QString &w, const QString &h) -> std::optional<QString> {
        *why = w;
        *hint = h;
        return std::nullopt;
    };
    if (text.isEmpty())
        return fail(QStringLiteral("the URL is empty"), originHint);
    if (hasSpaceOrControl(text))
        return fail(QStringLiteral("the URL contains whitespace"), originHint);
    if (text.startsWith(QLatin1String("unix:"), Qt::CaseInsensitive))
        return unixOriginOf(text, why, hint);
    const qsizetype sep = text.indexOf(QLatin1String("://"));
    const QString scheme = sep < 0 ? QString() : text.left(sep).toLower();
    if (scheme != u"http" && scheme != u"https")
        return fail(QStringLiteral("the URL must start with http://, https:// or unix:/"),
                    originHint);
    if (text.indexOf(QLatin1String("://"), sep + 3) >= 0)
        return fail(QStringLiteral("the URL has \"://\" twice"),
                    QStringLiteral("%1 ({{.URL}} already includes the scheme)").arg(originHint));
    const QUrl url(text, QUrl::StrictMode);
    if (!url.isValid())
        return fail(QStringLiteral("not a valid URL: %1").arg(url.errorString()), originHint);
    if (!url.userInfo().isEmpty())
        return fail(
            QStringLiteral("the URL carries user info"),
            QStringLiteral("SLP never sends credentials upstream; remove the \"user@\" part"));
    if (url.host().isEmpty())
        return fail(QStringLiteral("the URL has no host"), originHint);
    if (url.hasQuery() || url.hasFragment())
        return fail(QStringLiteral("the URL has a query or fragment"),
                    QStringLiteral("the request path and query are forwarded verbatim; %1")
                        .arg(originHint));
    const QString path = url.path(QUrl::FullyEncoded);
    if (!path.isEmpty() && path != u"/")
        return fail(QStringLiteral("the URL has a path (\"%1\")").arg(path),
                    QStringLiteral("the request path is forwarded verbatim; %1").arg(originHint));
    if (url.port() == 0)
        return fail(QStringLiteral("port 0 cannot be dialed"), originHint);

    QString host = url.host(QUrl::FullyEncoded).toLower();
    if (host.contains(QLatin1Char(':')))
        host = QLatin1Char('[') + host + QLatin1Char(']');
    QString origin = scheme + QStringLiteral("://") + host;
    if (url.port() > 0)
        origin += QLatin1Char(':') + QString::number(url.port());
    return origin;
}

std::optional<QString> YamlReader::readOrigin(const Field &f, const QString &path)
{
    const auto text = readString(f, path);
    if (!text)
        return std::nullopt;
    QString why;
    QString hint;
    const auto origin = originOf(*text, &why, &hint);
    if (!origin) {
        error(f.mark(), QStringLiteral("%1: \"%2\": %3").arg(path, *text, why), hint);
        return std::nullopt;
    }
    return origin;
}

} // namespace slp::configc
