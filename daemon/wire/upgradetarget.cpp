// SPDX-License-Identifier: GPL-3.0-or-later
#include "upgradetarget.h"

#include "hex.h"

#include <algorithm>

namespace slp {

namespace {

// One '&'-separated pair of the query: its key decoded, and where its raw value lies.
struct QueryPair
{
    QByteArray key;
    bool keyDecodes = false;
    qsizetype valueStart = 0;
    qsizetype valueLength = 0;
};

QueryPair pairAt(QByteArrayView target, qsizetype begin, qsizetype end)
{
    QueryPair pair;
    const QByteArrayView raw = target.sliced(begin, end - begin);
    const qsizetype equals = raw.indexOf('=');
    const QByteArrayView key = equals < 0 ? raw : raw.first(equals);
    pair.keyDecodes = decodeQueryComponent(key, &pair.key);
    pair.valueStart = equals < 0 ? end : begin + equals + 1;
    pair.valueLength = end - pair.valueStart;
    return pair;
}

// Whether any ';'-separated piece of `raw` has a key that decodes to `model`: what a parser
// that also splits on ';' (Python before 3.10 did) would take for one.
bool semicolonHidesModel(QByteArrayView raw)
{
    for (qsizetype semi = raw.indexOf(';'); semi >= 0;) {
        const qsizetype begin = semi + 1;
        semi = raw.indexOf(';', begin);
        const QueryPair piece = pairAt(raw, begin, semi < 0 ? raw.size() : semi);
        if (piece.keyDecodes && piece.key == "model")
            return true;
    }
    return false;
}

QString refusal(const char *why)
{
    return QStringLiteral("the model query parameter is ambiguous: %1").arg(QLatin1String(why));
}

} // namespace

bool decodeQueryComponent(QByteArrayView encoded, QByteArray *decoded)
{
    decoded->clear();
    decoded->reserve(encoded.size());
    for (qsizetype i = 0; i < encoded.size(); ++i) {
        const char c = encoded[i];
        if (c == '+') {
            *decoded += ' ';
        } else if (c != '%') {
            *decoded += c;
        } else {
            const int high = i + 2 < encoded.size() ? hexValue(encoded[i + 1]) : -1;
            const int low = high >= 0 ? hexValue(encoded[i + 2]) : -1;
            if (low < 0)
                return false;
            *decoded += char(high * 16 + low);
            i += 2;
        }
    }
    return true;
}

UpgradeModel findUpgradeModel(QByteArrayView target)
{
    UpgradeModel out;
    const qsizetype question = target.indexOf('?');
    if (question < 0)
        return out;
    if (target.indexOf('#', question) >= 0) {
        out.error = refusal("the target has a '#', which some parsers keep in the query");
        return out;
    }
    for (qsizetype pos = question + 1; pos <= target.size();) {
        qsizetype amp = target.indexOf('&', pos);
        if (amp < 0)
            amp = target.size();
        const QueryPair pair = pairAt(target, pos, amp);
        const QByteArrayView raw = target.sliced(pos, amp - pos);
        if (pair.keyDecodes && pair.key == "model") {
            if (out.found) {
                out.error = refusal("it is given more than once (a parser keeps the first, "
                                    "another the last)");
                return out;
            }
            out.found = true;
            out.valueStart = pair.valueStart;
            out.valueLength = pair.valueLength;
            const QByteArrayView value = target.sliced(pair.valueStart, pair.valueLength);
            if (value.contains(';') || !decodeQueryComponent(value, &out.id)) {
                out.error = refusal("its value holds a ';' or an invalid percent escape, "
                                    "which parsers read differently");
                return out;
            }
            if (std::any_of(value.begin(), value.end(), [](char c) { return uchar(c) >= 0x80; })) {
                out.error = refusal("its value holds a byte over 0x7F that is not "
                                    "percent-encoded, which parsers decode differently (send "
                                    "it as %XX)");
                return out;
            }
        } else if (semicolonHidesModel(raw)) {
            out.error = refusal("a ';' in the query hides another model parameter");
            return out;
        }
        pos = amp + 1;
    }
    return out;
}

QByteArray renameUpgradeModel(QByteArrayView target, const UpgradeModel &model,
                              QByteArrayView newId)
{
    if (!model.found)
        return target.toByteArray();
    QByteArray out = target.first(model.valueStart).toByteArray();
    out.append(newId.toByteArray().toPercentEncoding());
    out.append(target.sliced(model.valueStart + model.valueLength));
    return out;
}

} // namespace slp
