// SPDX-License-Identifier: GPL-3.0-or-later
// The multipart scanner on arbitrary bytes. Input: a boundary line ("...\n"), then the body
// (no newline, or an unusable boundary: the whole input is the body of boundary "b"). Checks:
// no crash; an accepted model is its span's bytes, 1..256 of valid UTF-8; the rename changes
// those bytes and nothing else, and the renamed body scans to the new model; a body cut
// anywhere before the end of its closing delimiter is refused; the resumable scanner fed in
// reads answers what the one-shot scan answers; and the second reading: two readers written
// here after python-multipart under Starlette and Go's mime/multipart read an accepted body
// with SLP's model, or refuse it (see "The second reading" below).
#include "body/multipartscanner.h"
#include "joinededits.h"
#include "wire/hex.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QString>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace slp;
using slp::test::spliceMultipartModel;

namespace {

[[noreturn]] void fail(const char *what, const QByteArray &boundary, const QByteArray &body,
                       const MultipartScan &scan)
{
    std::fprintf(
        stderr, "fuzz_multipart: %s\n  boundary: %s\n  body (%lld bytes): %s\n  ours: %d %s\n",
        what, boundary.toPercentEncoding().constData(), static_cast<long long>(body.size()),
        body.left(400).toPercentEncoding().constData(), int(scan.verdict), qPrintable(scan.error));
    std::abort();
}

void checkAccepted(const QByteArray &boundary, const QByteArray &body, const MultipartScan &scan)
{
    const qsizetype size = scan.valueEnd - scan.valueBegin;
    if (scan.valueBegin < 0 || scan.valueEnd > body.size() || size < 1 || size > maxModelBytes)
        fail("model span out of range", boundary, body, scan);
    if (scan.closeEnd < scan.valueEnd || scan.closeEnd > body.size())
        fail("closing delimiter out of range", boundary, body, scan);
    const QByteArray value = body.mid(scan.valueBegin, size);
    if (QString::fromUtf8(value) != scan.model || scan.model.toUtf8() != value)
        fail("model is not its span's bytes as UTF-8", boundary, body, scan);
    if (!scan.error.isEmpty())
        fail("an accepted body has an error message", boundary, body, scan);

    const QString renamed = QStringLiteral("renamed \"x\"\r\n\u00e9");
    const QByteArray out = spliceMultipartModel(body, scan, boundary, renamed);
    const QByteArray utf8 = renamed.toUtf8();
    if (out.left(scan.valueBegin) != body.left(scan.valueBegin) ||
        out.mid(scan.valueBegin, utf8.size()) != utf8 ||
        out.mid(scan.valueBegin + utf8.size()) != body.mid(scan.valueEnd))
        fail("rename touched bytes outside the model's value", boundary, body, scan);
    const MultipartScan again = scanMultipart(out, boundary);
    if (again.verdict != MultipartScan::Verdict::Ok || again.model != renamed ||
        again.valueBegin != scan.valueBegin || again.closeEnd != scan.closeEnd + utf8.size() - size)
        fail("the renamed body does not scan to the new model", boundary, body, scan);
}

void checkPrefixesRefused(const QByteArray &boundary, const QByteArray &body,
                          const MultipartScan &scan)
{
    // Every cut would be quadratic: the cuts next to each landmark, and one spread over the rest.
    const qsizetype marks[] = {0,
                               1,
                               scan.valueBegin,
                               scan.valueEnd,
                               scan.valueEnd + 1,
                               scan.closeEnd / 2,
                               scan.closeEnd - boundary.size() - 2,
                               scan.closeEnd - 2,
                               scan.closeEnd - 1};
    for (const qsizetype cut : marks) {
        if (cut < 0 || cut >= scan.closeEnd)
            continue;
        const MultipartScan part = scanMultipart(body.left(cut), boundary);
        if (part.verdict != MultipartScan::Verdict::Malformed || part.error.isEmpty())
            fail("a truncated body was not refused as malformed", boundary, body, scan);
    }
}

bool sameScan(const MultipartScan &a, const MultipartScan &b)
{
    return a.verdict == b.verdict && a.error == b.error && a.model == b.model &&
           a.valueBegin == b.valueBegin && a.valueEnd == b.valueEnd && a.closeEnd == b.closeEnd;
}

// Cut once at 16 points spread over the body and at two the input picks, and one byte at a
// time for short bodies; each read from a buffer of its own, as a grown buffer moves.
void checkSplits(const QByteArray &boundary, const QByteArray &body, const MultipartScan &scan)
{
    const auto fedIn = [&](std::initializer_list<qsizetype> cuts) {
        MultipartBodyScanner scanner(boundary);
        for (qsizetype cut : cuts) {
            const QByteArray soFar = body.left(cut);
            scanner.feed(soFar);
        }
        return scanner.finish(body);
    };
    const qsizetype n = body.size();
    const qsizetype picked = n > 0 ? qsizetype(uchar(body.back())) * n / 256 : 0;
    for (qsizetype i = 0; i <= 16; ++i)
        if (!sameScan(fedIn({i * n / 16}), scan))
            fail("a scan fed in two reads differs from the one-shot scan", boundary, body, scan);
    if (!sameScan(fedIn({picked / 3, picked}), scan))
        fail("a scan fed in reads the input picked differs from the one-shot scan", boundary, body,
             scan);
    if (n <= 512) {
        MultipartBodyScanner scanner(boundary);
        for (qsizetype k = 0; k <= n; ++k)
            scanner.feed(QByteArrayView(body.constData(), k));
        if (!sameScan(scanner.finish(body), scan))
            fail("a scan fed a byte at a time differs from the one-shot scan", boundary, body,
                 scan);
    }
}

// ---- The second reading ---------------------------------------------------------------------
// Two multipart readers written here from the parsers' own sources, sharing nothing with SLP's
// scanner: what a Starlette backend (python-multipart) and a Go backend (mime/multipart) hand
// their handler as the form's "model". A body SLP accepts must give each of them SLP's model,
// or no form at all. Both read the whole body as one chunk (both parsers are written to give
// the same answer however the body arrives).

// One field of the form a backend's handler sees.
struct FormField
{
    QByteArray name;
    bool file = false;    // a file upload, not a string
    bool decoded = false; // Go: quoted-printable, decoded before the form sees it (not modelled)
    QByteArray value;
};

enum class Outcome
{
    Parsed,   // read up to the closing delimiter
    Cut,      // the bytes ended first: no error (python-multipart's finalize() checks nothing),
              // Starlette keeps the parts it finished
    Rejected, // the parser raises: the backend answers 400, so there is nothing to compare
};

struct FormReading
{
    Outcome outcome = Outcome::Rejected;
    QList<FormField> fields;
};

bool isAsciiAlnum(uchar c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool isTchar(uchar c) // RFC 9110 tchar: python-multipart's TOKEN_CHARS, Go's header keys
{
    return isAsciiAlnum(c) || (c != 0 && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

// python-multipart 0.0.2x (MultipartParser, parse_options_header) under Starlette's
// MultiPartParser. Simplified: the form's charset is UTF-8 (SLP's models are UTF-8, so the
// latin-1 fallback never decides), header keys are lowercased as ASCII (only
// "content-disposition", "name" and "filename" are compared). Older python-multipart read the
// parameters through email.message's get_params(), which also decodes name*=: SLP refuses
// every name*= outright, so the current reading is the one to compare.
namespace py {

constexpr int maxHeaderCount = 8;               // DEFAULT_MAX_HEADER_COUNT
constexpr qsizetype maxHeaderSize = 4096 + 128; // DEFAULT_MAX_HEADER_SIZE
constexpr int maxFields = 1000;                 // Starlette's max_fields, and its max_files

bool isSpace(uchar c) // str.isspace() on a byte decoded as latin-1, as Starlette decodes them
{
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0;
}

QByteArray strip(QByteArrayView s, bool left, bool right)
{
    qsizetype begin = 0;
    qsizetype end = s.size();
    while (left && begin < end && isSpace(uchar(s[begin])))
        ++begin;
    while (right && end > begin && isSpace(uchar(s[end - 1])))
        --end;
    return s.sliced(begin, end - begin).toByteArray();
}

// An odd number of '"', not counting '\"': a ';' after them is inside a quoted string.
bool oddQuotes(QByteArrayView s)
{
    return (s.count('"') - s.count("\\\"")) % 2 != 0;
}

// email.message._parseparam as python-multipart vendors it: split on ';' (not one inside
// quotes), "key = v" joined to "key=v" with the key lowercased, each segment stripped.
QList<QByteArray> parseParams(QByteArrayView value)
{
    const QByteArray s = ';' + value.toByteArray();
    QList<QByteArray> segments;
    for (qsizetype start = 0; start < s.size() && s[start] == ';';) {
        ++start;
        qsizetype end = s.indexOf(';', start);
        while (end > 0 && oddQuotes(QByteArrayView(s).sliced(start, end - start)))
            end = s.indexOf(';', end + 1);
        if (end < 0)
            end = s.size();
        const QByteArrayView f = QByteArrayView(s).sliced(start, end - start);
        const qsizetype eq = f.indexOf('=');
        const QByteArray joined = eq < 0 ? f.toByteArray()
                                         : strip(f.first(eq), false, true).toLower() + '=' +
                                               strip(f.sliced(eq + 1), true, false);
        segments.append(strip(joined, true, true));
        start = end;
    }
    return segments;
}

struct Options
{
    bool hasName = false;
    QByteArray name;
    bool file = false;
};

// parse_options_header(): the LAST "name" wins (a dict); keys holding '*' (RFC 2231) are
// skipped; a quoted value loses its quotes, then "\\" and "\"" are undone, in that order.
Options options(const std::optional<QByteArray> &disposition)
{
    Options o;
    if (!disposition || !disposition->contains(';'))
        return o; // no parameters at all
    const QList<QByteArray> segments = parseParams(*disposition);
    for (qsizetype i = 1; i < segments.size(); ++i) {
        const qsizetype eq = segments[i].indexOf('=');
        const QByteArray key = eq < 0 ? segments[i] : segments[i].left(eq);
        QByteArray value = eq < 0 ? QByteArray() : segments[i].mid(eq + 1);
        if (key.contains('*'))
            continue;
        if (value.size() >= 2 && value.startsWith('"') && value.endsWith('"'))
            value = value.mid(1, value.size() - 2).replace("\\\\", "\\").replace("\\\"", "\"");
        if (key == "name") {
            o.hasName = true;
            o.name = value;
        } else if (key == "filename") {
            o.file = true;
        }
    }
    return o;
}

// One part's header lines at `pos` (the HEADER_* states): a name of token characters, a
// value after any spaces up to a CR that must be followed by LF (a bare LF stays in the
// value); Starlette keeps the LAST Content-Disposition. A stop comes back as an outcome.
std::optional<Outcome> headers(const QByteArray &body, qsizetype &pos,
                               std::optional<QByteArray> &disposition)
{
    const qsizetype n = body.size();
    for (int count = 1;; ++count) {
        if (pos >= n)
            return Outcome::Cut;
        if (body[pos] == '\r') { // the blank line
            if (pos + 1 >= n)
                return Outcome::Cut;
            if (body[pos + 1] != '\n')
                return Outcome::Rejected;
            pos += 2;
            return std::nullopt;
        }
        const qsizetype colon = body.indexOf(':', pos);
        const qsizetype nameEnd = colon < 0 ? n : colon;
        qsizetype size = nameEnd - pos + (colon < 0 ? 0 : 1);
        if (count > maxHeaderCount || size > maxHeaderSize)
            return Outcome::Rejected;
        for (qsizetype i = pos; i < nameEnd; ++i)
            if (!isTchar(uchar(body[i])))
                return Outcome::Rejected;
        if (colon < 0)
            return Outcome::Cut;
        if (colon == pos)
            return Outcome::Rejected;
        const bool isDisposition = body.mid(pos, colon - pos).toLower() == "content-disposition";
        for (pos = colon + 1; pos < n && body[pos] == ' '; ++pos)
            if (++size > maxHeaderSize)
                return Outcome::Rejected;
        const qsizetype cr = body.indexOf('\r', pos);
        if ((cr < 0 ? n : cr) - pos + size > maxHeaderSize)
            return Outcome::Rejected;
        if (cr < 0 || cr + 1 >= n)
            return Outcome::Cut;
        if (body[cr + 1] != '\n')
            return Outcome::Rejected;
        if (isDisposition)
            disposition = body.mid(pos, cr - pos);
        pos = cr + 2;
    }
}

// Where a part's content ends: the first CRLF "--boundary" followed by CRLF or by "--". Any
// other byte after it, transport padding too, makes it content. -1: the bytes end first.
qsizetype contentEnd(const QByteArray &body, const QByteArray &delimiter, qsizetype from,
                     bool &last)
{
    for (qsizetype h = body.indexOf(delimiter, from); h >= 0; h = body.indexOf(delimiter, h + 1)) {
        const qsizetype after = h + delimiter.size();
        if (after + 1 >= body.size())
            return -1;
        const QByteArrayView next = QByteArrayView(body).sliced(after, 2);
        if (next == "\r\n" || next == "--") {
            last = next == "--";
            return h;
        }
    }
    return -1;
}

// The START states: a leading CR or LF makes it jump to the first '-'; there it needs
// "--boundary" then CRLF, or "--boundary--" (a form with no parts). nullopt: a part starts
// at `pos`.
std::optional<Outcome> opening(const QByteArray &body, const QByteArray &boundary, qsizetype &pos)
{
    pos = 0;
    if (!body.isEmpty() && (body[0] == '\r' || body[0] == '\n')) {
        pos = body.indexOf('-');
        if (pos < 0)
            return Outcome::Cut;
    }
    const QByteArray dashBoundary = "--" + boundary;
    const QByteArrayView rest = QByteArrayView(body).sliced(pos);
    if (!rest.startsWith(dashBoundary))
        return QByteArrayView(dashBoundary).startsWith(rest) ? Outcome::Cut : Outcome::Rejected;
    pos += dashBoundary.size();
    if (pos >= body.size())
        return Outcome::Cut;
    const char c = body[pos];
    if (c != '-' && c != '\r')
        return Outcome::Rejected;
    if (pos + 1 >= body.size())
        return Outcome::Cut;
    if (body[pos + 1] != (c == '-' ? '-' : '\n'))
        return Outcome::Rejected;
    pos += 2;
    return c == '-' ? std::optional(Outcome::Parsed) : std::nullopt;
}

FormReading read(const QByteArray &body, const QByteArray &boundary)
{
    FormReading r;
    qsizetype pos = 0;
    if (const std::optional<Outcome> stop = opening(body, boundary, pos)) {
        r.outcome = *stop;
        return r;
    }
    const QByteArray delimiter = "\r\n--" + boundary;
    int fields = 0;
    int files = 0;
    for (;;) {
        std::optional<QByteArray> disposition;
        if (const std::optional<Outcome> stop = headers(body, pos, disposition)) {
            r.outcome = *stop;
            return r;
        }
        // Starlette raises on a part without a name, and past max_fields or max_files.
        const Options o = options(disposition);
        if (!o.hasName || ++(o.file ? files : fields) > maxFields)
            return r;
        bool last = false;
        const qsizetype end = contentEnd(body, delimiter, pos, last);
        if (end < 0) {
            r.outcome = Outcome::Cut; // the unfinished part is never added
            return r;
        }
        r.fields.append({o.name, o.file, false, body.mid(pos, end - pos)});
        pos = end + delimiter.size() + 2;
        if (last) {
            r.outcome = Outcome::Parsed;
            return r;
        }
    }
}

} // namespace py

// Go's mime/multipart Reader.ReadForm (Go 1.22), with net/textproto's readMIMEHeader and
// mime.ParseMediaType. Simplified: mime's lowercasing is ASCII only (no non-ASCII letter
// lowercases to one of "form-data", "name", "utf-8"), quoted-printable parts are marked, not
// decoded, and the header limit is counted per part (ReadForm also counts across files).
namespace go {

constexpr qsizetype lineBuffer = 4096; // bufio.Reader: a line NextPart reads must fit
constexpr int maxParts = 1000;         // multipartmaxparts
constexpr int maxHeaders = 10000;      // multipartmaxheaders

// unicode.IsSpace on the UTF-8 rune `s` starts with: its length, 0 when it is no space.
int spaceAt(QByteArrayView s)
{
    if (s.isEmpty())
        return 0;
    const uchar c = uchar(s[0]);
    if (c == ' ' || (c >= 0x09 && c <= 0x0d))
        return 1;
    if (s.startsWith("\xc2\x85") || s.startsWith("\xc2\xa0"))
        return 2; // NEL, NBSP
    for (const char *wide : {"\xe1\x9a\x80", "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf",
                             "\xe2\x81\x9f", "\xe3\x80\x80"})
        if (s.startsWith(wide))
            return 3;
    const bool enQuadToHairSpace = s.size() >= 3 && c == 0xe2 && uchar(s[1]) == 0x80 &&
                                   uchar(s[2]) >= 0x80 && uchar(s[2]) <= 0x8a;
    return enQuadToHairSpace ? 3 : 0;
}

QByteArrayView trimLeft(QByteArrayView s)
{
    while (const int k = spaceAt(s))
        s = s.sliced(k);
    return s;
}

QByteArrayView trimSpace(QByteArrayView s)
{
    s = trimLeft(s);
    for (bool more = true; more && !s.isEmpty();) {
        more = false;
        for (int k = 1; k <= 3 && !more; ++k)
            if (s.size() >= k && spaceAt(s.last(k)) == k) {
                s.chop(k);
                more = true;
            }
    }
    return s;
}

bool isTSpecial(char c)
{
    return c != 0 && std::strchr("()<>@,;:\\\"/[]?=", c) != nullptr;
}

qsizetype tokenEnd(QByteArrayView s) // mime's consumeToken: ASCII 0x21..0x7e, no tspecial
{
    qsizetype i = 0;
    while (i < s.size() && uchar(s[i]) > 0x20 && uchar(s[i]) < 0x7f && !isTSpecial(s[i]))
        ++i;
    return i;
}

// consumeValue(): a token, or a quoted-string in which a backslash escapes only a tspecial
// (Go keeps "\d" as written, for MSIE's paths) and a CR or LF fails it.
std::optional<QByteArray> consumeValue(QByteArrayView &v)
{
    if (v.isEmpty())
        return std::nullopt;
    if (v[0] != '"') {
        const qsizetype end = tokenEnd(v);
        if (end == 0)
            return std::nullopt;
        const QByteArray token = v.first(end).toByteArray();
        v = v.sliced(end);
        return token;
    }
    QByteArray out;
    for (qsizetype i = 1; i < v.size(); ++i) {
        const char c = v[i];
        if (c == '"') {
            v = v.sliced(i + 1);
            return out;
        }
        if (c == '\\' && i + 1 < v.size() && isTSpecial(v[i + 1])) {
            out += v[++i];
            continue;
        }
        if (c == '\r' || c == '\n')
            return std::nullopt;
        out += c;
    }
    return std::nullopt; // no closing quote
}

struct Param
{
    QByteArray key;
    QByteArray value;
};

// consumeMediaParam(): "; key = value", any unicode.IsSpace around each piece.
std::optional<Param> consumeParam(QByteArrayView &v)
{
    QByteArrayView rest = trimLeft(v);
    if (!rest.startsWith(';'))
        return std::nullopt;
    rest = trimLeft(rest.sliced(1));
    const qsizetype keyEnd = tokenEnd(rest);
    if (keyEnd == 0)
        return std::nullopt;
    Param p;
    p.key = rest.first(keyEnd).toByteArray().toLower();
    rest = trimLeft(rest.sliced(keyEnd));
    if (!rest.startsWith('='))
        return std::nullopt;
    rest = trimLeft(rest.sliced(1));
    const std::optional<QByteArray> value = consumeValue(rest);
    if (!value)
        return std::nullopt;
    p.value = *value;
    v = rest;
    return p;
}

// percentHexUnescape(): every '%' takes two hex digits, or the whole value fails.
std::optional<QByteArray> percentUnescape(QByteArrayView s)
{
    QByteArray out;
    for (qsizetype i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        const int high = i + 2 < s.size() ? hexValue(s[i + 1]) : -1;
        const int low = high >= 0 ? hexValue(s[i + 2]) : -1;
        if (low < 0)
            return std::nullopt;
        out += char(high * 16 + low);
        i += 2;
    }
    return out;
}

// decode2231Enc(): charset'language'%XX, the charset UTF-8 or US-ASCII.
std::optional<QByteArray> decode2231(const QByteArray &v)
{
    const qsizetype first = v.indexOf('\'');
    const qsizetype second = first < 0 ? -1 : v.indexOf('\'', first + 1);
    if (second < 0)
        return std::nullopt;
    const QByteArray charset = v.left(first).toLower();
    if (charset != "us-ascii" && charset != "utf-8")
        return std::nullopt;
    return percentUnescape(QByteArrayView(v).sliced(second + 1));
}

using ParamMap = QMap<QByteArray, QByteArray>;

// RFC 2231 as ParseMediaType stitches it: "key*" (decoded), else "key*0", "key*1*", ...
// joined; either replaces a plain "key".
void stitch(const QMap<QByteArray, ParamMap> &continuation, ParamMap &params)
{
    for (auto it = continuation.cbegin(); it != continuation.cend(); ++it) {
        const QByteArray &key = it.key();
        const ParamMap &pieces = it.value();
        if (pieces.contains(key + '*')) {
            if (const std::optional<QByteArray> decoded = decode2231(pieces.value(key + '*')))
                params.insert(key, *decoded);
            continue;
        }
        QByteArray joined;
        bool valid = false;
        for (int n = 0;; ++n) {
            const QByteArray simple = key + '*' + QByteArray::number(n);
            if (pieces.contains(simple)) {
                valid = true;
                joined += pieces.value(simple);
                continue;
            }
            if (!pieces.contains(simple + '*'))
                break;
            valid = true;
            const QByteArray &encoded = pieces[simple + '*'];
            joined += (n == 0 ? decode2231(encoded) : percentUnescape(encoded)).value_or("");
        }
        if (valid)
            params.insert(key, joined);
    }
}

bool validMediaType(QByteArrayView t) // checkMediaTypeDisposition(): token [ "/" token ]
{
    const qsizetype first = tokenEnd(t);
    if (first == 0 || first == t.size())
        return first > 0;
    const QByteArrayView subtype = t.sliced(first + 1);
    return t[first] == '/' && tokenEnd(subtype) > 0 && tokenEnd(subtype) == subtype.size();
}

struct Disposition
{
    QByteArray type;
    ParamMap params;
};

// mime.ParseMediaType(): a parameter it cannot read, or a key given twice with two values,
// fails it all (and the part then has no name).
std::optional<Disposition> parseMediaType(QByteArrayView v)
{
    const qsizetype semi = v.indexOf(';');
    const QByteArrayView base = semi < 0 ? v : v.first(semi);
    Disposition d;
    d.type = trimSpace(base).toByteArray().toLower();
    if (!validMediaType(d.type))
        return std::nullopt;
    QMap<QByteArray, ParamMap> continuation;
    for (QByteArrayView rest = v.sliced(base.size());;) {
        rest = trimLeft(rest);
        if (rest.isEmpty())
            break;
        QByteArrayView after = rest;
        const std::optional<Param> p = consumeParam(after);
        if (!p) {
            if (trimSpace(rest) == ";")
                break; // a trailing ';' is no error
            return std::nullopt;
        }
        const qsizetype star = p->key.indexOf('*');
        ParamMap &map = star < 0 ? d.params : continuation[p->key.left(star)];
        if (map.contains(p->key) && map.value(p->key) != p->value)
            return std::nullopt;
        map.insert(p->key, p->value);
        rest = after;
    }
    stitch(continuation, d.params);
    return d;
}

// bufio's ReadLine: up to '\n', without it or "\r\n"; at the end, the bytes left.
std::optional<QByteArray> readLine(const QByteArray &body, qsizetype &pos)
{
    if (pos >= body.size())
        return std::nullopt;
    const qsizetype eol = body.indexOf('\n', pos);
    const qsizetype end = eol < 0 ? body.size() : eol;
    QByteArray line = body.mid(pos, end - pos);
    pos = eol < 0 ? end : end + 1;
    if (eol >= 0 && line.endsWith('\r'))
        line.chop(1);
    return line;
}

QByteArray trimSpTab(QByteArray s) // textproto's trim(): SP and HT only
{
    while (!s.isEmpty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove(0, 1);
    while (!s.isEmpty() && (s.back() == ' ' || s.back() == '\t'))
        s.chop(1);
    return s;
}

// readContinuedLineSlice(): a header line (it needs a colon) with its continuation lines,
// those starting with SP or HT, joined by one space; an empty line is the block's end.
std::optional<QByteArray> continuedLine(const QByteArray &body, qsizetype &pos)
{
    const std::optional<QByteArray> line = readLine(body, pos);
    if (!line || line->isEmpty())
        return line;
    if (!line->contains(':'))
        return std::nullopt;
    QByteArray kv = trimSpTab(*line);
    const auto blank = [&] { return pos < body.size() && (body[pos] == ' ' || body[pos] == '\t'); };
    while (blank()) {
        while (blank())
            ++pos;
        kv += ' ';
        const std::optional<QByteArray> more = readLine(body, pos);
        if (!more)
            break;
        kv += trimSpTab(*more);
    }
    return kv;
}

struct Header
{
    std::optional<QByteArray> disposition;
    bool quotedPrintable = false;
};

// readMIMEHeader(): keys of token characters (a space is let through, but such a key is
// never canonical, so never Content-Disposition), values of HT, SP, VCHAR or obs-text;
// Header.Get() gives the FIRST value of a key.
bool readHeader(const QByteArray &body, qsizetype &pos, Header &h)
{
    if (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t'))
        return false; // the first line cannot be a continuation
    std::optional<QByteArray> transferEncoding;
    for (int count = 1;; ++count) {
        const std::optional<QByteArray> kv = continuedLine(body, pos);
        if (!kv)
            return false;
        if (kv->isEmpty())
            break;
        const QByteArray key = kv->left(kv->indexOf(':'));
        const QByteArray value = kv->mid(key.size() + 1);
        const auto keyByte = [](char c) { return isTchar(uchar(c)) || c == ' '; };
        const auto valueByte = [](char c) { return c == '\t' || (uchar(c) >= 0x20 && c != 0x7f); };
        if (key.isEmpty() || !std::all_of(key.cbegin(), key.cend(), keyByte) ||
            !std::all_of(value.cbegin(), value.cend(), valueByte) || count > maxHeaders)
            return false;
        QByteArrayView trimmed = value;
        while (trimmed.startsWith(' ') || trimmed.startsWith('\t'))
            trimmed = trimmed.sliced(1);
        if (key.compare("content-disposition", Qt::CaseInsensitive) == 0 && !h.disposition)
            h.disposition = trimmed.toByteArray();
        if (key.compare("content-transfer-encoding", Qt::CaseInsensitive) == 0 && !transferEncoding)
            transferEncoding = trimmed.toByteArray();
    }
    h.quotedPrintable =
        transferEncoding && transferEncoding->compare("quoted-printable", Qt::CaseInsensitive) == 0;
    return true;
}

// scanUntilBoundary(): the content ends before nl "--boundary" followed by SP, HT, CR, LF,
// "--" or the end of the bytes (or before "--boundary" so followed right at its start: an
// empty part). -1: it never ends.
qsizetype contentEnd(const QByteArray &body, qsizetype from, const QByteArray &nl,
                     const QByteArray &dashBoundary)
{
    const auto ends = [&](qsizetype after) {
        if (after >= body.size())
            return true; // then the delimiter line fails in NextPart
        const char c = body[after];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
            return true;
        return c == '-' && after + 1 < body.size() && body[after + 1] == '-';
    };
    if (QByteArrayView(body).sliced(from).startsWith(dashBoundary) &&
        ends(from + dashBoundary.size()))
        return from;
    const QByteArray nlDash = nl + dashBoundary;
    for (qsizetype h = body.indexOf(nlDash, from); h >= 0; h = body.indexOf(nlDash, h + 1))
        if (ends(h + nlDash.size()))
            return h;
    return -1;
}

// One part after its delimiter line: the header, then the content up to the next delimiter,
// where `pos` is left. ReadForm keeps it only with a form-data "name".
bool part(const QByteArray &body, qsizetype &pos, const QByteArray &nl,
          const QByteArray &dashBoundary, FormReading &r)
{
    Header h;
    if (!readHeader(body, pos, h))
        return false;
    const qsizetype end = contentEnd(body, pos, nl, dashBoundary);
    if (end < 0)
        return false;
    const std::optional<Disposition> d =
        h.disposition ? parseMediaType(*h.disposition) : std::nullopt;
    const QByteArray name = d && d->type == "form-data" ? d->params.value("name") : QByteArray();
    if (!name.isEmpty()) {
        const bool file = !d->params.value("filename").isEmpty();
        r.fields.append({name, file, h.quotedPrintable, body.mid(pos, end - pos)});
    }
    pos = end;
    return true;
}

QByteArrayView skipLwsp(QByteArrayView s)
{
    while (s.startsWith(' ') || s.startsWith('\t'))
        s = s.sliced(1);
    return s;
}

bool isFinal(QByteArrayView line, const QByteArray &dashBoundary, const QByteArray &nl)
{
    if (!line.startsWith(dashBoundary + "--"))
        return false;
    const QByteArrayView rest = skipLwsp(line.sliced(dashBoundary.size() + 2));
    return rest.isEmpty() || rest == nl;
}

// isBoundaryDelimiterLine(): the first one may end in a bare LF, which makes LF the newline
// of the whole body (a violation Go tolerates).
bool isDelimiterLine(QByteArrayView line, const QByteArray &dashBoundary, QByteArray &nl,
                     int partsRead)
{
    if (!line.startsWith(dashBoundary))
        return false;
    const QByteArrayView rest = skipLwsp(line.sliced(dashBoundary.size()));
    if (partsRead == 0 && rest == "\n")
        nl = "\n";
    return rest == nl;
}

// NextPart() line by line: before the first delimiter line, any line is preamble (a
// delimiter line is one at the start of ANY line, after a bare LF too); after a part, its
// newline, then a delimiter line or the final one.
FormReading read(const QByteArray &body, const QByteArray &boundary)
{
    FormReading r;
    const QByteArray dashBoundary = "--" + boundary;
    QByteArray nl = "\r\n";
    int partsRead = 0;
    bool expectNewPart = false;
    for (qsizetype pos = 0;;) {
        const qsizetype eol = body.indexOf('\n', pos);
        const qsizetype lineEnd = eol < 0 ? body.size() : eol + 1;
        if (lineEnd - pos > lineBuffer)
            return r; // ErrBufferFull
        const QByteArrayView line = QByteArrayView(body).sliced(pos, lineEnd - pos);
        pos = lineEnd;
        if (eol >= 0 && isDelimiterLine(line, dashBoundary, nl, partsRead)) {
            if (++partsRead > maxParts || !part(body, pos, nl, dashBoundary, r))
                return r;
            expectNewPart = false;
        } else if (isFinal(line, dashBoundary, nl)) {
            r.outcome = Outcome::Parsed;
            return r;
        } else if (eol < 0 || expectNewPart || (partsRead > 0 && line != nl)) {
            return r;
        } else {
            expectNewPart = partsRead > 0;
        }
    }
}

} // namespace go

// The model each backend's handler gets. Starlette's form.get("model") is the LAST field so
// named: its ImmutableMultiDict keeps the last value of a key (`{k: v for k, v in items}`),
// and FastAPI's Form() reads a field the same way. Go's r.FormValue("model") is the FIRST
// value (`vs[0]`); file parts are not values.
std::optional<FormField> starletteModel(const FormReading &r)
{
    for (auto it = r.fields.crbegin(); it != r.fields.crend(); ++it)
        if (it->name == "model")
            return *it;
    return std::nullopt;
}

std::optional<FormField> goModel(const FormReading &r)
{
    for (const FormField &f : r.fields)
        if (f.name == "model" && !f.file)
            return f;
    return std::nullopt;
}

void checkReader(const char *reader, const FormReading &r, const std::optional<FormField> &model,
                 const QByteArray &boundary, const QByteArray &body, const MultipartScan &scan)
{
    if (r.outcome == Outcome::Rejected)
        return; // the backend answers 400: it reads no model at all
    const QByteArray ours = scan.model.toUtf8();
    QByteArray what = QByteArray(reader);
    if (!model) {
        // A form read to its end without the model SLP routed by: the backend answers for
        // its default model, or 422. A body that ends early for the reader is its refusal.
        if (r.outcome == Outcome::Parsed)
            fail(what.append(" reads no model where SLP reads \"")
                     .append(ours.toPercentEncoding())
                     .append('"')
                     .constData(),
                 boundary, body, scan);
        return;
    }
    if (model->file || model->decoded)
        return; // not a string: FastAPI's Form() answers 422 (Go's decoding is not modelled)
    if (model->value != ours)
        fail(what.append(" reads the model \"")
                 .append(model->value.toPercentEncoding())
                 .append("\" where SLP reads \"")
                 .append(ours.toPercentEncoding())
                 .append('"')
                 .constData(),
             boundary, body, scan);
}

void checkSecondReading(const QByteArray &boundary, const QByteArray &body,
                        const MultipartScan &scan)
{
    const FormReading starlette = py::read(body, boundary);
    checkReader("python-multipart (Starlette, last model)", starlette, starletteModel(starlette),
                boundary, body, scan);
    const FormReading goForm = go::read(body, boundary);
    checkReader("Go mime/multipart (FormValue, first model)", goForm, goModel(goForm), boundary,
                body, scan);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    const QByteArray input(reinterpret_cast<const char *>(data), qsizetype(size));
    QByteArray boundary = "b";
    QByteArray body = input;
    const qsizetype newline = input.indexOf('\n');
    if (newline >= 0) {
        const QByteArray line = input.left(newline);
        if (boundaryError(line).isEmpty()) {
            boundary = line;
            body = input.mid(newline + 1);
        }
    }
    if (!boundaryError(boundary).isEmpty())
        std::abort();
    const MultipartScan scan = scanMultipart(body, boundary);
    checkSplits(boundary, body, scan);
    if (scan.verdict != MultipartScan::Verdict::Ok) {
        if (scan.error.isEmpty() || !scan.model.isEmpty())
            fail("a refusal without its message, or with a model", boundary, body, scan);
        if (!spliceMultipartModel(body, scan, boundary, QStringLiteral("x")).isEmpty())
            fail("a refused body was renamed", boundary, body, scan);
        return 0;
    }
    checkAccepted(boundary, body, scan);
    checkPrefixesRefused(boundary, body, scan);
    checkSecondReading(boundary, body, scan);
    return 0;
}
