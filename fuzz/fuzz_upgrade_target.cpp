// SPDX-License-Identifier: GPL-3.0-or-later
// findUpgradeModel / renameUpgradeModel on any query of a WebSocket upgrade target: no crash;
// an accepted model is its value's bytes decoded; the rename changes only those bytes and the
// renamed target reads as the new id; and the second reading: two query readers written here
// after Starlette (Python 3.10+ parse_qsl, keep_blank_values, the raw query decoded as
// latin-1, the LAST value) and Go (net/url ParseQuery, the FIRST value) must read SLP's model
// from every query SLP accepts, and the new id from every rename.
//
// Input: the query (after "/v1/realtime?"). Bytes the head parser refuses in a target
// (controls, space, DEL) end the run: such a request never reaches the router.
#include "body/modelid.h"
#include "wire/hex.h"
#include "wire/upgradetarget.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <cstdio>
#include <cstdlib>
#include <optional>

using namespace slp;

namespace {

[[noreturn]] void fail(const char *what, QByteArrayView target, QByteArrayView seen = {})
{
    std::fprintf(stderr, "fuzz_upgrade_target: %s\n  target: %s\n  read: %s\n", what,
                 target.toByteArray().toPercentEncoding("/?&=;%+").constData(),
                 seen.toByteArray().toPercentEncoding().constData());
    std::abort();
}

QByteArrayView queryOf(QByteArrayView target)
{
    const qsizetype question = target.indexOf('?');
    return question < 0 ? QByteArrayView() : target.sliced(question + 1);
}

// Python's unquote_plus(s, 'utf-8', 'replace') on a str decoded from the raw bytes as latin-1,
// written out as UTF-8: a byte over 0x7F is its latin-1 code point, an escape that is not
// two hex digits stays as written, and decoded escapes that are not UTF-8 become U+FFFD.
QByteArray pythonUnquotePlus(QByteArrayView raw)
{
    QByteArray out;
    QByteArray escaped; // a run of decoded %XX bytes, turned to text as UTF-8
    const auto flush = [&] {
        out += QString::fromUtf8(escaped).toUtf8(); // invalid sequences become U+FFFD
        escaped.clear();
    };
    for (qsizetype i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        const int high = c == '%' && i + 2 < raw.size() ? hexValue(raw[i + 1]) : -1;
        const int low = high >= 0 ? hexValue(raw[i + 2]) : -1;
        if (low >= 0) {
            escaped += char(high * 16 + low);
            i += 2;
            continue;
        }
        flush();
        if (c == '+')
            out += ' ';
        else
            out += QString(QChar(uchar(c))).toUtf8(); // latin-1
    }
    flush();
    return out;
}

// Starlette's QueryParams(scope["query_string"]).get("model"): the last "model".
std::optional<QByteArray> starletteModel(QByteArrayView target)
{
    std::optional<QByteArray> model;
    for (const QByteArrayView pair : QByteArray(queryOf(target).toByteArray()).split('&')) {
        if (pair.isEmpty())
            continue;
        const qsizetype eq = pair.indexOf('=');
        const QByteArrayView key = eq < 0 ? pair : pair.first(eq);
        if (pythonUnquotePlus(key) == "model")
            model = eq < 0 ? QByteArray() : pythonUnquotePlus(pair.sliced(eq + 1));
    }
    return model;
}

// Go's QueryUnescape: '+' a space, every '%' two hex digits or the whole component fails.
std::optional<QByteArray> goUnescape(QByteArrayView raw)
{
    QByteArray out;
    for (qsizetype i = 0; i < raw.size(); ++i) {
        if (raw[i] == '+') {
            out += ' ';
        } else if (raw[i] != '%') {
            out += raw[i];
        } else {
            const int high = i + 2 < raw.size() ? hexValue(raw[i + 1]) : -1;
            const int low = high >= 0 ? hexValue(raw[i + 2]) : -1;
            if (low < 0)
                return std::nullopt;
            out += char(high * 16 + low);
            i += 2;
        }
    }
    return out;
}

// Go's r.URL.Query().Get("model"): ParseQuery drops a pair holding ';' and a pair whose key or
// value does not unescape; Get gives the first value.
std::optional<QByteArray> goModel(QByteArrayView target)
{
    for (const QByteArrayView pair : QByteArray(queryOf(target).toByteArray()).split('&')) {
        if (pair.isEmpty() || pair.contains(';'))
            continue;
        const qsizetype eq = pair.indexOf('=');
        const std::optional<QByteArray> key = goUnescape(eq < 0 ? pair : pair.first(eq));
        const std::optional<QByteArray> value =
            goUnescape(eq < 0 ? QByteArrayView() : pair.sliced(eq + 1));
        if (key && value && *key == "model")
            return *value;
    }
    return std::nullopt;
}

void checkReaders(QByteArrayView target, const QByteArray &id)
{
    const std::optional<QByteArray> starlette = starletteModel(target);
    if (starlette != id)
        fail("Starlette reads another model than SLP", target, starlette.value_or("(none)"));
    const std::optional<QByteArray> go = goModel(target);
    if (go != id)
        fail("Go reads another model than SLP", target, go.value_or("(none)"));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 2048)
        return 0;
    const QByteArray query(reinterpret_cast<const char *>(data), qsizetype(size));
    for (const char c : query)
        if (uchar(c) <= 0x20 || uchar(c) == 0x7f)
            return 0; // the head parser refuses it: "control character in request target"
    const QByteArray target = "/v1/realtime?" + query;

    const UpgradeModel m = findUpgradeModel(target);
    if (!m.error.isEmpty() || !m.found)
        return 0; // refused (400), or no model: a 400 too
    if (m.valueStart < 0 || m.valueStart + m.valueLength > target.size())
        fail("the value's span is outside the target", target);
    QByteArray decoded;
    if (!decodeQueryComponent(target.mid(m.valueStart, m.valueLength), &decoded) || decoded != m.id)
        fail("the id is not its value's bytes decoded", target, m.id);
    if (!modelIdError(m.id, QStringLiteral("model")).isEmpty())
        return 0; // the router refuses it (empty, too long, not UTF-8)
    checkReaders(target, m.id);

    // The rename: only the value's bytes change, and every reader reads the new id.
    for (const QByteArray &newId : {QByteArray("Qwen/Qwen3-8B"), QByteArray("a b+c&model=d;e#f%g"),
                                    QByteArray("caf\xc3\xa9")}) {
        const QByteArray renamed = renameUpgradeModel(target, m, newId);
        if (!renamed.startsWith(target.first(m.valueStart)) ||
            !renamed.endsWith(target.sliced(m.valueStart + m.valueLength)))
            fail("the rename changed bytes outside the value", target, renamed);
        const UpgradeModel again = findUpgradeModel(renamed);
        if (!again.found || !again.error.isEmpty() || again.id != newId)
            fail("the renamed target does not read as the new id", renamed, again.id);
        checkReaders(renamed, newId);
    }
    return 0;
}
