#include "config/config.h"

#include "bytesize.h"

#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSet>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <limits>

namespace slp {

namespace {

constexpr auto kDurationHint = "use Go duration syntax such as 300ms, 30s, 2m, 1h30m";
constexpr auto kSizeHint = "use plain bytes or a size such as 512KiB, 64MiB, 1GiB";
constexpr auto kBoolHint = "use true or false";
const QString kDefaultTimeoutText = QStringLiteral("60s");

const QList<QString> kTopKeys = {
    QStringLiteral("listen"),
    QStringLiteral("log_requests"),
    QStringLiteral("max_body_bytes"),
    QStringLiteral("max_header_bytes"),
    QStringLiteral("header_timeout"),
    QStringLiteral("idle_timeout"),
    QStringLiteral("max_connections"),
    QStringLiteral("shutdown_grace"),
    QStringLiteral("upstream_transport"),
    QStringLiteral("max_upstream_connections"),
    QStringLiteral("workers"),
    QStringLiteral("discovery"),
    QStringLiteral("backends"),
    QStringLiteral("editions"),
};
const QList<QString> kDiscoveryKeys = {QStringLiteral("backoff_initial"),
                                       QStringLiteral("backoff_max"), QStringLiteral("recheck"),
                                       QStringLiteral("probe_timeout")};
const QList<QString> kBackendKeys = {QStringLiteral("name"),    QStringLiteral("url"),
                                     QStringLiteral("timeout"), QStringLiteral("model"),
                                     QStringLiteral("retry"),   QStringLiteral("aggregate")};
const QList<QString> kEditionKeys = {QStringLiteral("suffix"),  QStringLiteral("url"),
                                     QStringLiteral("model"),   QStringLiteral("timeout"),
                                     QStringLiteral("retry"),   QStringLiteral("aggregate"),
                                     QStringLiteral("apply_to")};
const QList<QString> kEditionUrlFields = {QStringLiteral("Name"), QStringLiteral("URL")};
const QList<QString> kEditionModelFields = {QStringLiteral("Name"), QStringLiteral("URL"),
                                            QStringLiteral("Model")};

int editDistance(const QString &a, const QString &b)
{
    QList<int> prev(b.size() + 1);
    QList<int> cur(b.size() + 1);
    for (qsizetype j = 0; j <= b.size(); ++j)
        prev[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        cur[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

// The closest candidate for a typo ("timout" -> "timeout"), or empty when nothing is close.
QString closest(const QString &word, const QList<QString> &candidates)
{
    QString best;
    int bestDistance = std::numeric_limits<int>::max();
    for (const QString &c : candidates) {
        const int d = c.compare(word, Qt::CaseInsensitive) == 0
                          ? 0
                          : editDistance(word.toLower(), c.toLower());
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    const int limit = std::max<qsizetype>(1, std::min<qsizetype>(3, word.size() / 3));
    return bestDistance <= limit ? best : QString();
}

QString quoteList(const QList<QString> &items)
{
    return items.join(QStringLiteral(", "));
}

// Go's %q, near enough for names in log lines.
QString goQuote(const QString &s)
{
    QString out = QStringLiteral("\"");
    for (const QChar c : s) {
        if (c == QLatin1Char('"') || c == QLatin1Char('\\'))
            out += QLatin1Char('\\');
        out += c;
    }
    return out + QLatin1Char('"');
}

bool hasSpaceOrControl(const QString &s)
{
    return std::any_of(s.begin(), s.end(),
                       [](QChar c) { return c.isSpace() || c.category() == QChar::Other_Control; });
}

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

// One `key: value` pair, keeping the key so a null value (whose mark points past it) can
// still be located.
struct Field
{
    YAML::Node key;
    YAML::Node value;
    bool present = false;

    YAML::Mark mark() const
    {
        if (!present)
            return YAML::Mark::null_mark();
        return value.IsNull() ? key.Mark() : value.Mark();
    }
};

struct Backend
{
    bool nameOk = false;
    bool urlOk = false;
    QString name;
    QString origin;
    std::optional<QString> pin;
    int line = 0;
    int nameColumn = 0;
};

// An edition entry as read, before it expands into routes.
struct Edition
{
    QString path; // "editions[N]"
    int line = 0;
    int column = 0;
    QString suffix;
    Field urlField;
    Field modelField;
    std::optional<TextTemplate> urlTemplate;
    std::optional<TextTemplate> modelTemplate;
    Nanoseconds timeout = std::chrono::seconds(60);
    QString timeoutText = kDefaultTimeoutText;
    bool aggregate = false;
    bool applyAll = true;
    QSet<QString> applyTo;
};

class Compiler
{
public:
    Compiler(const QByteArray &yaml, const QString &fileName) : m_source(yaml), m_file(fileName) {}

    ConfigResult run();

private:
    void error(const YAML::Mark &mark, const QString &what, const QString &hint,
               int columnOffset = 0);
    QHash<QString, Field> fields(const YAML::Node &map, const QString &path,
                                 const QList<QString> &known);

    std::optional<QString> readString(const Field &f, const QString &path);
    std::optional<bool> readBool(const Field &f, const QString &path);
    std::optional<Nanoseconds> readDuration(const Field &f, const QString &path, bool allowZero,
                                            QString *written = nullptr);
    std::optional<qint64> readSize(const Field &f, const QString &path);
    std::optional<qint64> readInt(const Field &f, const QString &path, qint64 min, qint64 max,
                                  const QString &rangeHint);
    std::optional<QString> readOrigin(const Field &f, const QString &path);
    int valueColumnOffset(const YAML::Node &value) const;

    void readTopLevel(const QHash<QString, Field> &top);
    void readDiscovery(const Field &f);
    void readBackends(const Field &f);
    void readEditions(const Field &f);
    void readEdition(const YAML::Node &node, int index);
    std::optional<TextTemplate> readTemplate(const Field &k, const QString &keyPath,
                                             const QList<QString> &allowed);
    bool readApplyTo(const Field &k, Edition &ed);
    void expandEdition(const Edition &ed, bool addRoutes);
    void checkDuplicateIds();

    QByteArray m_source;
    QString m_file;
    QList<ConfigError> m_errors;
    Config m_config;
    QList<Backend> m_backends;
    QList<int> m_routeColumns; // parallel to m_config.routes, for duplicate-id errors
};

void Compiler::error(const YAML::Mark &mark, const QString &what, const QString &hint,
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
int Compiler::valueColumnOffset(const YAML::Node &value) const
{
    const int pos = value.Mark().pos;
    if (pos < 0 || pos >= m_source.size())
        return 0;
    const char c = m_source.at(pos);
    return (c == '"' || c == '\'') ? 1 : 0;
}

QHash<QString, Field> Compiler::fields(const YAML::Node &map, const QString &path,
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
            const QString guess = closest(name, known);
            QString hint = QStringLiteral("known keys: %1").arg(quoteList(known));
            if (!guess.isEmpty())
                hint = QStringLiteral("did you mean \"%1\"? %2").arg(guess, hint);
            error(key.Mark(), QStringLiteral("unknown key \"%1%2\"").arg(where, name), hint);
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

std::optional<QString> Compiler::readString(const Field &f, const QString &path)
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

std::optional<bool> Compiler::readBool(const Field &f, const QString &path)
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

std::optional<Nanoseconds> Compiler::readDuration(const Field &f, const QString &path,
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

std::optional<qint64> Compiler::readSize(const Field &f, const QString &path)
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

std::optional<qint64> Compiler::readInt(const Field &f, const QString &path, qint64 min, qint64 max,
                                        const QString &rangeHint)
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

// Validates an upstream URL and returns its origin: "scheme://host[:port]".
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
    const qsizetype sep = text.indexOf(QLatin1String("://"));
    const QString scheme = sep < 0 ? QString() : text.left(sep).toLower();
    if (scheme != u"http" && scheme != u"https")
        return fail(QStringLiteral("the URL must start with http:// or https://"), originHint);
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

std::optional<QString> Compiler::readOrigin(const Field &f, const QString &path)
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

ConfigResult Compiler::run()
{
    std::vector<YAML::Node> docs;
    try {
        docs = YAML::LoadAll(m_source.toStdString());
    } catch (const YAML::ParserException &e) {
        error(e.mark, QStringLiteral("YAML syntax error: %1").arg(QString::fromStdString(e.msg)),
              QStringLiteral("check the indentation, quotes and brackets on or just before this "
                             "line"));
        return m_errors;
    } catch (const YAML::Exception &e) {
        error(e.mark, QStringLiteral("cannot read YAML: %1").arg(QString::fromStdString(e.msg)),
              QStringLiteral("check the YAML syntax"));
        return m_errors;
    }

    if (docs.empty() || docs.front().IsNull()) {
        error(YAML::Mark::null_mark(), QStringLiteral("the config is empty"),
              QStringLiteral("add a backends: list with at least one name and url"));
        return m_errors;
    }
    if (docs.size() > 1) {
        error(docs[1].Mark(), QStringLiteral("more than one YAML document in the config"),
              QStringLiteral("keep one document: remove the \"---\" separator"));
        return m_errors;
    }
    const YAML::Node &root = docs.front();
    if (!root.IsMap()) {
        error(root.Mark(),
              QStringLiteral("the config must be a mapping of keys (listen:, backends:, ...), "
                             "not %1")
                  .arg(kindOf(root)),
              QStringLiteral("start with \"backends:\" at the beginning of a line"));
        return m_errors;
    }

    try {
        const auto top = fields(root, QString(), kTopKeys);
        readTopLevel(top);
        readDiscovery(top.value(QStringLiteral("discovery")));
        readBackends(top.value(QStringLiteral("backends")));
        readEditions(top.value(QStringLiteral("editions")));
        checkDuplicateIds();
    } catch (const YAML::Exception &e) {
        // Not expected (we never call as<>()), but a config error beats a crash.
        error(e.mark, QStringLiteral("cannot read YAML: %1").arg(QString::fromStdString(e.msg)),
              QStringLiteral("check the YAML syntax"));
    }

    if (!m_errors.isEmpty()) {
        std::stable_sort(m_errors.begin(), m_errors.end(),
                         [](const ConfigError &a, const ConfigError &b) {
                             return std::pair(a.line, a.column) < std::pair(b.line, b.column);
                         });
        return m_errors;
    }
    return m_config;
}

void Compiler::readTopLevel(const QHash<QString, Field> &top)
{
    m_config.listen = *parseListenAddress(QStringLiteral(":8080"));

    if (const Field f = top.value(QStringLiteral("listen")); f.present) {
        if (const auto text = readString(f, QStringLiteral("listen"))) {
            QString why;
            if (const auto addr = parseListenAddress(*text, &why))
                m_config.listen = *addr;
            else
                error(f.mark(), QStringLiteral("listen: %1").arg(why),
                      QStringLiteral("write \":8080\" (quoted) for all interfaces, "
                                     "\"127.0.0.1:8080\" or \"[::1]:8080\" for one"));
        }
    }
    if (const Field f = top.value(QStringLiteral("log_requests")); f.present) {
        if (const auto v = readBool(f, QStringLiteral("log_requests")))
            m_config.logRequests = *v;
    }
    if (const Field f = top.value(QStringLiteral("max_body_bytes")); f.present) {
        if (const auto v = readSize(f, QStringLiteral("max_body_bytes")))
            m_config.maxBodyBytes = *v;
    }
    if (const Field f = top.value(QStringLiteral("max_header_bytes")); f.present) {
        if (const auto v = readSize(f, QStringLiteral("max_header_bytes")))
            m_config.maxHeaderBytes = *v;
    }
    if (const Field f = top.value(QStringLiteral("header_timeout")); f.present) {
        if (const auto v = readDuration(f, QStringLiteral("header_timeout"), false))
            m_config.headerTimeout = *v;
    }
    if (const Field f = top.value(QStringLiteral("idle_timeout")); f.present) {
        if (const auto v = readDuration(f, QStringLiteral("idle_timeout"), false))
            m_config.idleTimeout = *v;
    }
    if (const Field f = top.value(QStringLiteral("max_connections")); f.present) {
        if (const auto v =
                readInt(f, QStringLiteral("max_connections"), 1, std::numeric_limits<int>::max(),
                        QStringLiteral("use a positive number, e.g. 10000")))
            m_config.maxConnections = int(*v);
    }
    if (const Field f = top.value(QStringLiteral("shutdown_grace")); f.present) {
        // 0 is meaningful: cut in-flight requests at once.
        if (const auto v = readDuration(f, QStringLiteral("shutdown_grace"), true))
            m_config.shutdownGrace = *v;
    }
    if (const Field f = top.value(QStringLiteral("upstream_transport")); f.present) {
        if (const auto v = readString(f, QStringLiteral("upstream_transport"))) {
            const QList<QString> known = {QStringLiteral("qnam"), QStringLiteral("socket")};
            if (known.contains(*v)) {
                m_config.upstreamTransport = *v;
            } else {
                const QString guess = closest(*v, known);
                error(f.mark(),
                      QStringLiteral("upstream_transport: unknown transport \"%1\"").arg(*v),
                      guess.isEmpty()
                          ? QStringLiteral("use qnam or socket")
                          : QStringLiteral("did you mean \"%1\"? use qnam or socket").arg(guess));
            }
        }
    }
    if (const Field f = top.value(QStringLiteral("workers")); f.present) {
        // Each worker is one more event loop on the port; beyond the core count they only
        // contend, and 64 bounds a typo such as 1000.
        if (const auto v =
                readInt(f, QStringLiteral("workers"), 1, kMaxWorkers,
                        QStringLiteral("use 1 to %1, e.g. the number of cores").arg(kMaxWorkers)))
            m_config.workers = int(*v);
    }
    if (const Field f = top.value(QStringLiteral("max_upstream_connections")); f.present) {
        // Below 6 would reintroduce the per-host queueing the contract forbids.
        if (const auto v = readInt(f, QStringLiteral("max_upstream_connections"), 6,
                                   std::numeric_limits<int>::max(),
                                   QStringLiteral("use at least 6, e.g. 1024")))
            m_config.maxUpstreamConnections = int(*v);
    }
}

void Compiler::readDiscovery(const Field &f)
{
    if (!f.present || f.value.IsNull())
        return;
    if (!f.value.IsMap()) {
        error(f.mark(), QStringLiteral("discovery must be a mapping, not %1").arg(kindOf(f.value)),
              QStringLiteral("known keys: %1").arg(quoteList(kDiscoveryKeys)));
        return;
    }
    const auto keys = fields(f.value, QStringLiteral("discovery"), kDiscoveryKeys);
    DiscoverySettings &d = m_config.discovery;
    bool initialOk = true;
    if (const Field k = keys.value(QStringLiteral("backoff_initial")); k.present) {
        const auto v = readDuration(k, QStringLiteral("discovery.backoff_initial"), false);
        initialOk = v.has_value();
        if (v)
            d.backoffInitial = *v;
    }
    if (const Field k = keys.value(QStringLiteral("backoff_max")); k.present) {
        if (const auto v = readDuration(k, QStringLiteral("discovery.backoff_max"), false))
            d.backoffMax = *v;
    }
    if (const Field k = keys.value(QStringLiteral("recheck")); k.present) {
        if (const auto v = readDuration(k, QStringLiteral("discovery.recheck"), false))
            d.recheck = *v;
    }
    if (const Field k = keys.value(QStringLiteral("probe_timeout")); k.present) {
        if (const auto v = readDuration(k, QStringLiteral("discovery.probe_timeout"), false))
            d.probeTimeout = *v;
    }
    if (initialOk && d.backoffMax < d.backoffInitial) {
        const Field k = keys.contains(QStringLiteral("backoff_max"))
                            ? keys.value(QStringLiteral("backoff_max"))
                            : keys.value(QStringLiteral("backoff_initial"));
        error(k.mark(),
              QStringLiteral("discovery.backoff_max (%1) is less than discovery.backoff_initial "
                             "(%2)")
                  .arg(formatGoDuration(d.backoffMax), formatGoDuration(d.backoffInitial)),
              QStringLiteral("make backoff_max at least backoff_initial"));
    }
}

void Compiler::readBackends(const Field &f)
{
    const QString noBackends = QStringLiteral("no backends: SLP would serve nothing");
    const QString addHint = QStringLiteral("add a backends: list with at least one entry, e.g. "
                                           "\"- name: my-model\" and \"url: http://host:8000\"");
    if (!f.present || f.value.IsNull()) {
        error(f.present ? f.mark() : YAML::Mark::null_mark(), noBackends, addHint);
        return;
    }
    if (!f.value.IsSequence()) {
        error(f.mark(), QStringLiteral("backends must be a list, not %1").arg(kindOf(f.value)),
              QStringLiteral("write each backend as a list item starting with \"- name:\""));
        return;
    }
    if (f.value.size() == 0) {
        error(f.mark(), noBackends, addHint);
        return;
    }

    int index = 0;
    for (const YAML::Node &node : f.value) {
        const QString path = QStringLiteral("backends[%1]").arg(index++);
        Backend b;
        Route r;
        r.line = node.Mark().line + 1;
        r.timeout = std::chrono::seconds(60);
        r.timeoutText = kDefaultTimeoutText;
        int column = node.Mark().column + 1;
        if (!node.IsMap()) {
            error(node.Mark(),
                  QStringLiteral("%1 must be a mapping, not %2").arg(path, kindOf(node)),
                  QStringLiteral("write each backend as \"- name: ...\" with url: etc. below it"));
            m_backends.append(b);
            m_config.routes.append(r);
            m_routeColumns.append(column);
            continue;
        }
        const auto keys = fields(node, path, kBackendKeys);

        if (const Field k = keys.value(QStringLiteral("name")); !k.present) {
            error(node.Mark(), QStringLiteral("%1 has no name").arg(path),
                  QStringLiteral("add \"name: ID\": the model id clients send"));
        } else if (const auto name = readString(k, path + QStringLiteral(".name"))) {
            column = k.mark().column + 1;
            if (name->isEmpty()) {
                error(k.mark(), QStringLiteral("%1.name is empty").arg(path),
                      QStringLiteral("give the model id clients send"));
            } else if (hasSpaceOrControl(*name)) {
                error(k.mark(),
                      QStringLiteral("%1.name %2 contains whitespace").arg(path, goQuote(*name)),
                      QStringLiteral("model ids are matched exactly; remove the spaces"));
            } else {
                b.name = *name;
                b.nameOk = true;
            }
        }

        if (const Field k = keys.value(QStringLiteral("url")); !k.present) {
            error(node.Mark(), QStringLiteral("%1 has no url").arg(path),
                  QStringLiteral("add \"url: http://host:port\" (the origin only)"));
        } else if (const auto origin = readOrigin(k, path + QStringLiteral(".url"))) {
            b.origin = *origin;
            b.urlOk = true;
        }

        if (const Field k = keys.value(QStringLiteral("timeout")); k.present) {
            QString written;
            if (const auto t =
                    readDuration(k, path + QStringLiteral(".timeout"), false, &written)) {
                r.timeout = *t;
                r.timeoutText = written;
            }
        }
        if (const Field k = keys.value(QStringLiteral("model")); k.present) {
            if (const auto pin = readString(k, path + QStringLiteral(".model"))) {
                if (pin->trimmed().isEmpty())
                    error(k.mark(), QStringLiteral("%1.model is empty").arg(path),
                          QStringLiteral("remove model: to discover the name, or give the "
                                         "upstream's model name"));
                else
                    b.pin = *pin;
            }
        }
        if (const Field k = keys.value(QStringLiteral("retry")); k.present) {
            if (const auto v = readBool(k, path + QStringLiteral(".retry")))
                r.retry = *v;
        }
        if (const Field k = keys.value(QStringLiteral("aggregate")); k.present) {
            if (const auto v = readBool(k, path + QStringLiteral(".aggregate")))
                r.aggregate = *v;
        }

        b.line = r.line;
        b.nameColumn = column;
        r.id = b.name;
        r.backendName = b.name;
        r.origin = b.origin;
        r.url = QUrl(b.origin);
        if (b.pin) {
            r.nameSource = NameSource::Pinned;
            r.pinnedModel = *b.pin;
        } else {
            r.nameSource = NameSource::Discover;
        }
        m_backends.append(b);
        m_config.routes.append(r);
        m_routeColumns.append(column);
    }
}

void Compiler::readEditions(const Field &f)
{
    if (!f.present || f.value.IsNull())
        return;
    if (!f.value.IsSequence()) {
        error(f.mark(), QStringLiteral("editions must be a list, not %1").arg(kindOf(f.value)),
              QStringLiteral("write each edition as a list item starting with \"- suffix:\""));
        return;
    }
    int index = 0;
    for (const YAML::Node &node : f.value)
        readEdition(node, index++);
}

// Parses a template field, reporting errors at the offending column.
std::optional<TextTemplate> Compiler::readTemplate(const Field &k, const QString &keyPath,
                                                   const QList<QString> &allowed)
{
    const auto text = readString(k, keyPath);
    if (!text)
        return std::nullopt;
    if (text->trimmed().isEmpty()) {
        error(k.mark(), QStringLiteral("%1 is empty").arg(keyPath),
              keyPath.endsWith(QLatin1String(".model"))
                  ? QStringLiteral("remove model: to forward the edition's id unchanged")
                  : QStringLiteral("give a URL template such as http://copydesk-{{.Name}}:8100"));
        return std::nullopt;
    }
    QString why;
    int col = 0;
    auto tpl = TextTemplate::parse(*text, allowed, &why, &col);
    if (!tpl) {
        QString hint = QStringLiteral("use {{.Field}} with one of: .%1")
                           .arg(allowed.join(QStringLiteral(", .")));
        static const QRegularExpression unknownField(QStringLiteral("unknown field \\.(\\w+)"));
        const auto m = unknownField.match(why);
        if (m.hasMatch() && m.captured(1) == u"Model") {
            hint = QStringLiteral(".Model is only available in an edition's model:; %1").arg(hint);
        } else if (m.hasMatch()) {
            const QString guess = closest(m.captured(1), allowed);
            if (!guess.isEmpty())
                hint = QStringLiteral("did you mean {{.%1}}? %2").arg(guess, hint);
        }
        error(k.mark(), QStringLiteral("%1: bad template %2: %3").arg(keyPath, goQuote(*text), why),
              hint, valueColumnOffset(k.value) + col);
    }
    return tpl;
}

void Compiler::readEdition(const YAML::Node &node, int index)
{
    const QString path = QStringLiteral("editions[%1]").arg(index);
    if (!node.IsMap()) {
        error(node.Mark(), QStringLiteral("%1 must be a mapping, not %2").arg(path, kindOf(node)),
              QStringLiteral("write each edition as \"- suffix: ...\" with url: etc. below it"));
        return;
    }
    const auto keys = fields(node, path, kEditionKeys);
    Edition ed;
    ed.path = path;
    ed.line = node.Mark().line + 1;
    ed.column = node.Mark().column + 1;

    if (const Field k = keys.value(QStringLiteral("suffix")); !k.present) {
        error(node.Mark(), QStringLiteral("%1 has no suffix").arg(path),
              QStringLiteral("add \"suffix: -something\": edition ids are backend name + suffix"));
    } else if (const auto s = readString(k, path + QStringLiteral(".suffix"))) {
        ed.column = k.mark().column + 1;
        if (s->isEmpty()) {
            error(k.mark(), QStringLiteral("%1.suffix is empty").arg(path),
                  QStringLiteral("an empty suffix would repeat every backend's id; use e.g. "
                                 "-edited"));
        } else if (hasSpaceOrControl(*s)) {
            error(k.mark(),
                  QStringLiteral("%1.suffix %2 contains whitespace").arg(path, goQuote(*s)),
                  QStringLiteral("model ids are matched exactly; remove the spaces"));
        } else {
            ed.suffix = *s;
        }
    }

    ed.urlField = keys.value(QStringLiteral("url"));
    if (!ed.urlField.present) {
        error(node.Mark(), QStringLiteral("%1 has no url").arg(path),
              QStringLiteral("add a URL template such as \"url: http://copydesk-{{.Name}}:8100\""));
    } else {
        ed.urlTemplate =
            readTemplate(ed.urlField, path + QStringLiteral(".url"), kEditionUrlFields);
    }

    ed.modelField = keys.value(QStringLiteral("model"));
    bool modelOk = true;
    if (ed.modelField.present) {
        ed.modelTemplate =
            readTemplate(ed.modelField, path + QStringLiteral(".model"), kEditionModelFields);
        modelOk = ed.modelTemplate.has_value();
    }

    if (const Field k = keys.value(QStringLiteral("timeout")); k.present) {
        QString written;
        if (const auto t = readDuration(k, path + QStringLiteral(".timeout"), false, &written)) {
            ed.timeout = *t;
            ed.timeoutText = written;
        }
    }
    if (const Field k = keys.value(QStringLiteral("retry")); k.present) {
        if (const auto v = readBool(k, path + QStringLiteral(".retry")); v && *v)
            error(k.mark(),
                  QStringLiteral("%1: retry: true on an edition is not allowed: a retry re-runs "
                                 "the edition's filter")
                      .arg(path),
                  QStringLiteral("remove retry: or set it to false"));
    }
    if (const Field k = keys.value(QStringLiteral("aggregate")); k.present) {
        if (const auto v = readBool(k, path + QStringLiteral(".aggregate")))
            ed.aggregate = *v;
    }

    const bool applyOk = readApplyTo(keys.value(QStringLiteral("apply_to")), ed);
    if (!ed.urlTemplate || !applyOk)
        return;
    // A bad suffix or model still lets the URLs be checked, so all errors show in one run.
    expandEdition(ed, !ed.suffix.isEmpty() && modelOk);
}

// apply_to: which backends, by name; "*" (the default) is all of them.
bool Compiler::readApplyTo(const Field &k, Edition &ed)
{
    if (!k.present)
        return true;
    ed.applyAll = false;
    QList<QString> knownNames;
    for (const Backend &b : m_backends) {
        if (b.nameOk && !knownNames.contains(b.name))
            knownNames.append(b.name);
    }
    const QString listHint = QStringLiteral("write apply_to: [\"*\"] or a list of backend names, "
                                            "e.g. [%1]")
                                 .arg(quoteList(knownNames.mid(0, 2)));
    if (!k.value.IsSequence()) {
        error(k.mark(),
              QStringLiteral("%1.apply_to must be a list, not %2").arg(ed.path, kindOf(k.value)),
              listHint);
        return false;
    }
    if (k.value.size() == 0) {
        error(
            k.mark(),
            QStringLiteral("%1.apply_to is empty: the edition applies to no backend").arg(ed.path),
            QStringLiteral("remove the edition, or %1").arg(listHint));
        return false;
    }
    bool ok = true;
    int i = 0;
    for (const YAML::Node &item : k.value) {
        const QString itemPath = QStringLiteral("%1.apply_to[%2]").arg(ed.path).arg(i++);
        const auto name = readString(Field{k.key, item, true}, itemPath);
        if (!name) {
            ok = false;
        } else if (*name == u"*") {
            ed.applyAll = true;
        } else if (ed.applyTo.contains(*name)) {
            error(item.Mark(),
                  QStringLiteral("%1: backend \"%2\" is listed twice").arg(itemPath, *name),
                  QStringLiteral("list each backend once"));
        } else if (!knownNames.contains(*name)) {
            const QString guess = closest(*name, knownNames);
            QString hint = QStringLiteral("known backends: %1").arg(quoteList(knownNames));
            if (!guess.isEmpty())
                hint = QStringLiteral("did you mean \"%1\"? %2").arg(guess, hint);
            error(item.Mark(), QStringLiteral("%1: unknown backend \"%2\"").arg(itemPath, *name),
                  hint);
            ok = false;
        } else {
            ed.applyTo.insert(*name);
        }
    }
    return ok;
}

// One route per applicable backend, in backend order. With `addRoutes` false only the
// rendered URLs are checked.
void Compiler::expandEdition(const Edition &ed, bool addRoutes)
{
    QString firstBadUrl;
    QString firstBadHint;
    int badUrls = 0;
    for (int bi = 0; bi < m_backends.size(); ++bi) {
        const Backend &b = m_backends[bi];
        if (!b.nameOk || !b.urlOk)
            continue; // already reported; do not cascade
        if (!ed.applyAll && !ed.applyTo.contains(b.name))
            continue;
        QHash<QString, QString> values{{QStringLiteral("Name"), b.name},
                                       {QStringLiteral("URL"), b.origin}};
        const QString rendered = ed.urlTemplate->render(values);
        QString why;
        QString hint;
        const auto origin = originOf(rendered, &why, &hint);
        if (!origin) {
            // One error per edition: the same template usually fails the same way everywhere.
            if (badUrls++ == 0) {
                firstBadUrl =
                    QStringLiteral("%1.url: template renders \"%2\" for backend \"%3\": %4")
                        .arg(ed.path, rendered, b.name, why);
                firstBadHint = hint;
            }
            continue;
        }
        if (!addRoutes)
            continue;

        Route r;
        r.id = b.name + ed.suffix;
        r.backendName = b.name;
        r.isEdition = true;
        r.origin = *origin;
        r.url = QUrl(*origin);
        r.timeout = ed.timeout;
        r.timeoutText = ed.timeoutText;
        r.retry = false;
        r.aggregate = ed.aggregate; // never inherited from the backend
        r.line = ed.line;
        if (!ed.modelTemplate) {
            r.nameSource = NameSource::Passthrough;
        } else if (ed.modelTemplate->uses(QStringLiteral("Model")) && !b.pin) {
            // The backend's name is only known at runtime: re-rendered as discovery learns it.
            r.nameSource = NameSource::FollowsBackend;
            r.followsRoute = bi;
            r.modelTemplate = ed.modelTemplate;
        } else {
            if (b.pin)
                values.insert(QStringLiteral("Model"), *b.pin);
            r.nameSource = NameSource::Pinned;
            r.pinnedModel = ed.modelTemplate->render(values);
            if (r.pinnedModel.trimmed().isEmpty()) {
                error(ed.modelField.mark(),
                      QStringLiteral("%1.model renders an empty name for backend \"%2\"")
                          .arg(ed.path, b.name),
                      QStringLiteral("remove model: to forward the edition's id unchanged"));
                continue;
            }
        }
        m_config.routes.append(r);
        m_routeColumns.append(ed.column);
    }
    if (badUrls > 1)
        firstBadUrl += QStringLiteral(" (and %1 more backends)").arg(badUrls - 1);
    if (badUrls > 0)
        error(ed.urlField.mark(), firstBadUrl, firstBadHint);
}

void Compiler::checkDuplicateIds()
{
    QHash<QString, int> first;
    for (int i = 0; i < m_config.routes.size(); ++i) {
        const Route &r = m_config.routes[i];
        if (r.id.isEmpty())
            continue; // a missing name, already reported
        const auto it = first.constFind(r.id);
        if (it == first.constEnd()) {
            first.insert(r.id, i);
            continue;
        }
        const Route &earlier = m_config.routes[*it];
        YAML::Mark mark;
        mark.line = r.line - 1;
        mark.column = m_routeColumns[i] - 1;
        const QString hint =
            (r.isEdition || earlier.isEdition)
                ? QStringLiteral("ids must be unique after editions expand: rename a backend, "
                                 "change the suffix, or narrow apply_to")
                : QStringLiteral("give each backend its own name");
        error(mark,
              QStringLiteral("duplicate model id \"%1\" (line %2; first defined at line %3%4)")
                  .arg(r.id)
                  .arg(r.line)
                  .arg(earlier.line)
                  .arg(earlier.isEdition ? QStringLiteral(" by an edition") : QString()),
              hint);
    }
}

} // namespace

QString ConfigError::toString() const
{
    QString where = file;
    if (line > 0) {
        where += (where.isEmpty() ? QStringLiteral("line ") : QStringLiteral(":")) +
                 QString::number(line);
        if (column > 0)
            where += QLatin1Char(':') + QString::number(column);
    }
    QString out = where.isEmpty() ? what : where + QStringLiteral(": ") + what;
    if (!hint.isEmpty())
        out += QStringLiteral(" (hint: %1)").arg(hint);
    return out;
}

ConfigResult compileConfig(const QByteArray &yaml, const QString &fileName)
{
    return Compiler(yaml, fileName).run();
}

ConfigResult loadConfigFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        ConfigError e;
        e.file = path;
        e.what = QStringLiteral("cannot read the config: %1").arg(file.errorString());
        e.hint = QStringLiteral("check the path given to --config and its permissions");
        return QList<ConfigError>{e};
    }
    return compileConfig(file.readAll(), path);
}

QString routeDumpLine(const Config &config, int index, int width)
{
    const Route &r = config.routes.at(index);
    QString line = r.id.leftJustified(width) + QStringLiteral(" -> ") + r.origin;
    switch (r.nameSource) {
    case NameSource::Pinned:
        return line + QStringLiteral(" as ") + goQuote(r.pinnedModel);
    case NameSource::Discover:
        return line + QStringLiteral(" (discovering)");
    case NameSource::Passthrough:
        return line + QStringLiteral(" (passthrough)");
    case NameSource::FollowsBackend: {
        const bool valid = r.followsRoute >= 0 && r.followsRoute < config.routes.size();
        return line + QStringLiteral(" (follows %1)")
                          .arg(valid ? config.routes.at(r.followsRoute).id : r.backendName);
    }
    }
    return line;
}

} // namespace slp
