// SPDX-License-Identifier: GPL-3.0-or-later
#include "jsonoracle.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QRegularExpression>

namespace slp::test {

QtVerdict qtVerdict(const QByteArray &body)
{
    QtVerdict v;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &err);
    v.error = err.error;
    if (err.error == QJsonParseError::NoError) {
        v.valid = true;
        v.isObject = doc.isObject();
        v.object = doc.object();
        return v;
    }
    const QByteArray t = body.trimmed();
    if (!t.startsWith('{') && !t.startsWith('[') && !t.startsWith("\xEF\xBB\xBF")) {
        QJsonParseError err2;
        const QJsonDocument wrapped = QJsonDocument::fromJson("[" + body + "]", &err2);
        if (err2.error == QJsonParseError::NoError && wrapped.array().size() == 1) {
            v.valid = true;
            v.error = QJsonParseError::NoError;
        } else if (err2.error != QJsonParseError::NoError) {
            v.error = err2.error;
        }
    }
    return v;
}

namespace {

// Valid for QJsonDocument, refused by the scanner at byte n: a documented difference?
const char *laxerInQt(const QByteArray &body, const BodyScan &ours, qsizetype n)
{
    if (ours.error.startsWith(QLatin1String("control character")))
        return uchar(body[n]) < 0x20 ? "raw control character in string" : nullptr;
    if (ours.error.startsWith(QLatin1String("invalid escape"))) {
        return body[n] == '\\' && n + 1 < body.size() &&
                       !QByteArrayView("\"\\/bfnrtu").contains(body[n + 1])
                   ? "unknown escape"
                   : nullptr;
    }
    if (ours.error.startsWith(QLatin1String("invalid number"))) {
        // Qt's laxer number: digits may be missing before or after the point.
        static const QRegularExpression lax(
            QStringLiteral("^-?(\\d*)(\\.(\\d*))?([eE][+-]?\\d+)?"));
        const auto nm = lax.match(QString::fromLatin1(body.mid(n, 65536)));
        if (nm.hasMatch() && nm.capturedLength(0) > 0 &&
            (nm.capturedLength(1) == 0 || (nm.capturedLength(2) > 0 && nm.capturedLength(3) == 0)))
            return "number without digits before/after '.'";
    }
    return nullptr;
}

} // namespace

const char *knownDifference(const QByteArray &body, const BodyScan &ours, const QtVerdict &qt)
{
    const bool oursValid = ours.verdict != BodyScan::Verdict::NotJson;
    if (oursValid && !qt.valid) {
        if (qt.error == QJsonParseError::IllegalNumber)
            return "number out of double range (RFC: valid, Qt: IllegalNumber)";
        if (qt.error == QJsonParseError::DeepNesting)
            return "nesting 513..1024";
        return nullptr;
    }
    if (!oursValid && qt.valid) {
        if (ours.error.startsWith(QLatin1String("UTF-8 byte order mark")))
            return body.startsWith("\xEF\xBB\xBF") ? "leading BOM" : nullptr;
        if (ours.error.startsWith(QLatin1String("nesting")) ||
            ours.error.contains(QLatin1String("too deep")))
            return "nesting 513..1024";
        static const QRegularExpression atByte(QStringLiteral("at byte (\\d+)"));
        const auto m = atByte.match(ours.error);
        if (!m.hasMatch())
            return nullptr;
        const qsizetype n = m.captured(1).toLongLong();
        if (n < 0 || n >= body.size())
            return nullptr;
        return laxerInQt(body, ours, n);
    }
    return nullptr;
}

BodyScan::Stream expectedStream(const QJsonObject &o)
{
    if (!o.contains(QLatin1String("stream")))
        return BodyScan::Stream::Absent;
    const QJsonValue v = o.value(QLatin1String("stream"));
    if (v.isBool())
        return v.toBool() ? BodyScan::Stream::True : BodyScan::Stream::False;
    return BodyScan::Stream::Other;
}

bool expectedLogprobs(const QJsonObject &o)
{
    for (const char *k : {"logprobs", "top_logprobs", "echo", "prompt_logprobs"}) {
        const QString key = QLatin1String(k);
        if (!o.contains(key))
            continue;
        const QJsonValue v = o.value(key);
        if (!v.isNull() && !(v.isBool() && !v.toBool()))
            return true;
    }
    return false;
}

std::optional<QString> qtDecodeLiteral(const QByteArray &literal)
{
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson("[" + literal + "]", &err);
    if (err.error != QJsonParseError::NoError || doc.array().size() != 1 ||
        !doc.array().at(0).isString())
        return std::nullopt;
    return doc.array().at(0).toString();
}

} // namespace slp::test
