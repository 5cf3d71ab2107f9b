// SPDX-License-Identifier: GPL-3.0-or-later
#include "body/bodyscanner.h"
#include "joinededits.h"
#include "jsonoracle.h"
#include "jsonstring.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QtTest>

#include <algorithm>
#include <limits>
#include <optional>

using slp::BodyScan;
using slp::jsonStringLiteral;
using slp::scanBody;
using slp::test::spliceModel;
using namespace slp::test;

Q_DECLARE_METATYPE(BodyScan::Verdict)
Q_DECLARE_METATYPE(BodyScan::Stream)

namespace {

// Printable form of a body for failure messages.
QByteArray show(const QByteArray &body)
{
    QByteArray out;
    for (const char ch : body.left(400)) {
        const uchar c = uchar(ch);
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out += char(c);
        else
            out += "\\x" + QByteArray::number(c, 16).rightJustified(2, '0');
    }
    if (body.size() > 400)
        out += "...(" + QByteArray::number(body.size()) + " bytes)";
    return out;
}

const char *verdictName(BodyScan::Verdict v)
{
    switch (v) {
    case BodyScan::Verdict::Ok:
        return "Ok";
    case BodyScan::Verdict::NotJson:
        return "NotJson";
    case BodyScan::Verdict::NotObject:
        return "NotObject";
    case BodyScan::Verdict::ModelMissing:
        return "ModelMissing";
    case BodyScan::Verdict::ModelNotString:
        return "ModelNotString";
    case BodyScan::Verdict::ModelDuplicate:
        return "ModelDuplicate";
    case BodyScan::Verdict::ModelAmbiguous:
        return "ModelAmbiguous";
    }
    return "?";
}

// ---- Random JSON generator ------------------------------------------------------------------

struct KeyChoice
{
    const char *raw;     // as written between the quotes
    const char *decoded; // what it means
};

const KeyChoice kKeys[] = {
    {"model", "model"},
    {"model", "model"},
    {"mod\\u0065l", "model"},
    {"\\u006dodel", "model"},
    {"m\\u006F\\u0064el", "model"},
    {"stream", "stream"},
    {"str\\u0065am", "stream"},
    {"logprobs", "logprobs"},
    {"top_logprobs", "top_logprobs"},
    {"echo", "echo"},
    {"prompt_logprobs", "prompt_logprobs"},
    {"prompt_\\u006cogprobs", "prompt_logprobs"},
    {"Model", "Model"},
    {"model ", "model "},
    {"models", "models"},
    {"messages", "messages"},
    {"content", "content"},
    {"a", "a"},
    {"", ""},
    {"\\u00fc", "\xc3\xbc"},
    {"\xc3\xbc", "\xc3\xbc"},
    {"max_tokens", "max_tokens"},
};

class Gen
{
public:
    explicit Gen(quint32 seed) : m_rng(seed) {}

    int below(int n) { return int(m_rng.bounded(quint32(n))); }
    bool chance(int percent) { return below(100) < percent; }

    QByteArray ws()
    {
        if (!chance(30))
            return {};
        QByteArray out;
        const int n = 1 + below(3);
        for (int i = 0; i < n; ++i)
            out += " \t\n\r"[below(4)];
        return out;
    }

    QByteArray hex4(uint v)
    {
        QByteArray h = QByteArray::number(v, 16).rightJustified(4, '0');
        return chance(50) ? h.toUpper() : h;
    }

    // Body of a string literal (without quotes): plain text, escapes, raw UTF-8.
    QByteArray stringBody()
    {
        QByteArray out;
        const int pieces = below(4) == 0 ? 0 : below(12);
        for (int i = 0; i < pieces; ++i) {
            switch (below(10)) {
            case 0: {
                static const char *esc[] = {"\\\"", "\\\\", "\\/", "\\b",
                                            "\\f",  "\\n",  "\\r", "\\t"};
                out += esc[below(8)];
                break;
            }
            case 1: {
                uint v = uint(below(0xFFFF));
                if (v >= 0xD800 && v < 0xE000)
                    v = 0x41 + v % 26;
                out += "\\u" + hex4(v);
                break;
            }
            case 2: { // surrogate pair, rarely a lone one (QJsonDocument and we both keep it)
                const uint hi = 0xD800 + uint(below(0x400)), lo = 0xDC00 + uint(below(0x400));
                if (chance(10))
                    out += "\\u" + hex4(chance(50) ? hi : lo);
                else
                    out += "\\u" + hex4(hi) + "\\u" + hex4(lo);
                break;
            }
            case 3: { // raw UTF-8 of 2, 3 or 4 bytes
                static const char32_t cps[] = {0xE9,    0x3A9,    0x20AC, 0x4E2D, 0xFFFD, 0xFFFE,
                                               0x1F600, 0x10FFFF, 0x2028, 0x7FF,  0x800,  0x10000};
                const char32_t cp = cps[below(int(std::size(cps)))];
                out += QString::fromUcs4(&cp, 1).toUtf8();
                break;
            }
            case 4:
                out += '\x7f';
                break;
            default: {
                const int n = 1 + below(8);
                for (int k = 0; k < n; ++k) {
                    char c = char(0x20 + below(0x5f));
                    if (c == '"' || c == '\\')
                        c = 'q';
                    out += c;
                }
            }
            }
        }
        return out;
    }

    QByteArray number()
    {
        QByteArray out;
        if (chance(30))
            out += '-';
        if (chance(25)) {
            out += '0';
        } else {
            out += char('1' + below(9));
            const int n = below(6);
            for (int i = 0; i < n; ++i)
                out += char('0' + below(10));
        }
        if (chance(30)) {
            out += '.';
            const int n = 1 + below(4);
            for (int i = 0; i < n; ++i)
                out += char('0' + below(10));
        }
        if (chance(20)) {
            out += chance(50) ? 'e' : 'E';
            if (chance(60))
                out += chance(50) ? '+' : '-';
            out += QByteArray::number(below(100)); // stays inside double's range
        }
        return out;
    }

    QByteArray scalar()
    {
        switch (below(6)) {
        case 0:
            return "true";
        case 1:
            return "false";
        case 2:
            return "null";
        case 3:
            return number();
        default:
            return '"' + stringBody() + '"';
        }
    }

    QByteArray value(int depth)
    {
        const int r = below(10);
        if (depth < 4 && r == 0)
            return array(depth + 1);
        if (depth < 4 && r == 1)
            return object(depth + 1, false);
        return scalar();
    }

    QByteArray array(int depth)
    {
        QByteArray out = "[" + ws();
        const int n = below(5);
        for (int i = 0; i < n; ++i) {
            if (i)
                out += ws() + "," + ws();
            out += value(depth);
        }
        return out + ws() + "]";
    }

    QByteArray key(bool top)
    {
        if (top && chance(20)) // the spellings of "model" come first in kKeys
            return kKeys[below(5)].raw;
        if (chance(top ? 75 : 50))
            return kKeys[below(int(std::size(kKeys)))].raw;
        return stringBody();
    }

    // A value for a top-level key, biased so each verdict comes up often.
    QByteArray topValue(const QByteArray &k)
    {
        if (k.contains("od") && chance(80)) // model-ish keys: mostly strings
            return '"' + stringBody() + '"';
        if (chance(40)) {
            static const char *flags[] = {"true", "false", "null", "1", "\"yes\"", "{}", "[]"};
            return flags[below(7)];
        }
        return value(1);
    }

    QByteArray object(int depth, bool top)
    {
        QByteArray out = "{" + ws();
        const int n = top ? below(7) : below(4);
        for (int i = 0; i < n; ++i) {
            if (i)
                out += ws() + "," + ws();
            const QByteArray k = key(top);
            const std::optional<QString> decoded = qtDecodeLiteral('"' + k + '"');
            if (top && decoded == std::optional<QString>(u"model"_qs))
                ++m_topModelKeys;
            else if (top && decoded &&
                     decoded->compare(QLatin1String("model"), Qt::CaseInsensitive) == 0)
                m_topModelVariant = true;
            out += '"' + k + '"' + ws() + ":" + ws();
            out += top ? topValue(k) : value(depth);
        }
        return out + ws() + "}";
    }

    // Top-level "model" keys (after unescaping) in the last body(), counted independently.
    int topModelKeys() const { return m_topModelKeys; }
    // Whether the last body() had a top-level key that is "model" in another case.
    bool topModelVariant() const { return m_topModelVariant; }

    QByteArray body()
    {
        m_topModelKeys = 0;
        m_topModelVariant = false;
        QByteArray core;
        const int r = below(100);
        if (r < 85)
            core = object(1, true);
        else if (r < 95)
            core = array(1);
        else
            core = scalar();
        return ws() + core + ws();
    }

    QByteArray mutate(QByteArray b)
    {
        static const char interesting[] = {
            '"', '\\', ',', '{', '}',  '[',    ']',    ':',    '0',    '.',    'e',    '-', ' ',
            'u', '\n', 'n', 't', '\0', '\x01', '\x80', '\xc3', '\xed', '\xff', '\xef', '1', '/'};
        const int ops = 1 + below(3);
        for (int i = 0; i < ops; ++i) {
            const int pos = b.isEmpty() ? 0 : below(int(b.size()));
            const char c =
                chance(70) ? interesting[below(int(sizeof interesting))] : char(below(256));
            switch (below(4)) {
            case 0:
                if (!b.isEmpty())
                    b[pos] = c;
                break;
            case 1:
                b.insert(pos, c);
                break;
            case 2:
                if (!b.isEmpty())
                    b.remove(pos, 1 + below(3));
                break;
            default:
                if (!b.isEmpty()) // duplicate a slice: makes repeated keys and commas
                    b.insert(pos, b.mid(below(int(b.size())), 1 + below(12)));
            }
        }
        return b;
    }

private:
    QRandomGenerator m_rng;
    int m_topModelKeys = 0;
    bool m_topModelVariant = false;
};

QByteArray bigBase64Body(qsizetype approxBytes)
{
    QByteArray b64;
    b64.reserve(approxBytes);
    QRandomGenerator rng(7);
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    while (b64.size() < approxBytes)
        b64 += alphabet[rng.bounded(64)];
    return R"({"model":"mistral-small-4","messages":[{"role":"user","content":[)"
           R"({"type":"text","text":"What is in this image?"},)"
           R"({"type":"image_url","image_url":{"url":"data:image/png;base64,)" +
           b64 + R"("}}]}],"max_tokens":300,"stream":false})";
}

} // namespace

class TestBodyScanner : public QObject
{
    Q_OBJECT

private slots:
    void verdicts_data();
    void verdicts();
    void spans_data();
    void spans();
    void nesting();
    void streamFlag_data();
    void streamFlag();
    void logprobs_data();
    void logprobs();
    void errorMessages();
    void literal_data();
    void literal();
    void splice();
    void differential();
    void throughput();
    void benchmark();
};

void TestBodyScanner::verdicts_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<BodyScan::Verdict>("verdict");
    using V = BodyScan::Verdict;
    struct Row
    {
        const char *name;
        QByteArray body;
        V verdict;
    };
    const Row rows[] = {
        // Not JSON at all
        {"empty", "", V::NotJson},
        {"whitespace only", " \t\r\n", V::NotJson},
        {"BOM", "\xEF\xBB\xBF{\"model\":\"a\"}", V::NotJson},
        {"open brace", "{", V::NotJson},
        {"close brace", "}", V::NotJson},
        {"trailing comma object", R"({"model":"a",})", V::NotJson},
        {"trailing comma array", R"({"model":"a","x":[1,]})", V::NotJson},
        {"leading comma array", R"({"model":"a","x":[,1]})", V::NotJson},
        {"empty member", R"({,})", V::NotJson},
        {"leading zero", R"({"model":"a","n":01})", V::NotJson},
        {"negative leading zero", R"({"model":"a","n":-01})", V::NotJson},
        {"point no frac", R"({"model":"a","n":1.})", V::NotJson},
        {"point no int", R"({"model":"a","n":.5})", V::NotJson},
        {"minus point", R"({"model":"a","n":-.5})", V::NotJson},
        {"bare minus", R"({"model":"a","n":-})", V::NotJson},
        {"exp no digits", R"({"model":"a","n":1e})", V::NotJson},
        {"exp sign no digits", R"({"model":"a","n":1e+})", V::NotJson},
        {"plus sign", R"({"model":"a","n":+1})", V::NotJson},
        {"hex number", R"({"model":"a","n":0x1})", V::NotJson},
        {"NaN", R"({"model":"a","n":NaN})", V::NotJson},
        {"Infinity", R"({"model":"a","n":Infinity})", V::NotJson},
        {"raw control char", "{\"model\":\"a\x01\"}", V::NotJson},
        {"raw tab in string", "{\"model\":\"a\tb\"}", V::NotJson},
        {"raw newline in key", "{\"mo\ndel\":\"a\"}", V::NotJson},
        {"raw NUL", QByteArray("{\"model\":\"a\0\"}", 14), V::NotJson},
        {"invalid escape x", R"({"model":"\x41"})", V::NotJson},
        {"invalid escape quote", R"({"model":"\'"})", V::NotJson},
        {"short \\u", R"({"model":"\u12"})", V::NotJson},
        {"bad hex \\u", R"({"model":"\u12g4"})", V::NotJson},
        {"uppercase \\U", R"({"model":"\U0041"})", V::NotJson},
        {"overlong UTF-8", "{\"model\":\"\xC0\x80\"}", V::NotJson},
        {"overlong 3-byte", "{\"model\":\"\xE0\x80\x80\"}", V::NotJson},
        {"UTF-8 surrogate", "{\"model\":\"\xED\xA0\x80\"}", V::NotJson},
        {"above U+10FFFF", "{\"model\":\"\xF4\x90\x80\x80\"}", V::NotJson},
        {"byte FF", "{\"model\":\"\xFF\"}", V::NotJson},
        {"lone continuation", "{\"model\":\"\x80\"}", V::NotJson},
        {"truncated sequence", "{\"model\":\"\xE2\x82\"}", V::NotJson},
        {"truncated at end", "{\"model\":\"\xE2\x82", V::NotJson},
        {"bad UTF-8 in nested key", "{\"model\":\"a\",\"x\":{\"\xC3\":1}}", V::NotJson},
        {"non-ASCII outside string", "{\"model\":\"a\"}\xC3\xA9", V::NotJson},
        {"trailing garbage", R"({"model":"a"} x)", V::NotJson},
        {"two objects", R"({"model":"a"}{})", V::NotJson},
        {"trailing NUL", QByteArray("{\"model\":\"a\"}\0", 14), V::NotJson},
        {"form feed is not whitespace", "{\"model\":\"a\"}\f", V::NotJson},
        {"missing colon", R"({"model" "a"})", V::NotJson},
        {"missing comma", R"({"model":"a" "b":1})", V::NotJson},
        {"key without value", R"({"model"})", V::NotJson},
        {"single quotes", R"({'model':'a'})", V::NotJson},
        {"unquoted key", R"({model:"a"})", V::NotJson},
        {"truncated literal", R"({"model":"a","s":tru})", V::NotJson},
        {"literal with tail", R"({"model":"a","s":truex})", V::NotJson},
        {"capital True", R"({"model":"a","s":True})", V::NotJson},
        {"unterminated string", R"({"model":"abc)", V::NotJson},
        {"unterminated escape", R"({"model":"abc\)", V::NotJson},
        {"mismatched bracket", R"({"model":"a","x":[1,2}})", V::NotJson},
        {"mismatched brace", R"({"model":"a","x":{]})", V::NotJson},
        {"unclosed object", R"({"model":"a")", V::NotJson},
        {"comment", R"({"model":"a"} // hi)", V::NotJson},
        // JSON, but not an object
        {"array", R"([{"model":"a"}])", V::NotObject},
        {"empty array", "[]", V::NotObject},
        {"number", " 42 ", V::NotObject},
        {"negative exp number", "-1.5e+3", V::NotObject},
        {"string", R"("model")", V::NotObject},
        {"null", "null", V::NotObject},
        {"true", "true", V::NotObject},
        // Objects without a usable model
        {"empty object", "{}", V::ModelMissing},
        {"empty object ws", " \n{ \t}\r\n", V::ModelMissing},
        // Go's encoding/json matches keys without case: "Model" is its model (one reading).
        {"capital Model", R"({"Model":"a"})", V::ModelAmbiguous},
        {"Model beside model", R"({"model":"a","MODEL":"b"})", V::ModelAmbiguous},
        {"escaped Model", R"({"model":"a","\u004dodel":"b"})", V::ModelAmbiguous},
        {"models", R"({"models":"a"})", V::ModelMissing},
        {"model with space", R"({"model ":"a"})", V::ModelMissing},
        {"escaped near miss", R"({"mod\u0065ll":"a"})", V::ModelMissing},
        {"nested object model", R"({"x":{"model":"a"}})", V::ModelMissing},
        {"nested array model", R"({"x":[{"model":"a"}]})", V::ModelMissing},
        {"model as array string", R"({"x":["model","a"]})", V::ModelMissing},
        {"model as value", R"({"x":"model"})", V::ModelMissing},
        {"deep nested model", R"({"a":{"b":{"model":"x","model":"y"}}})", V::ModelMissing},
        {"model number", R"({"model":1})", V::ModelNotString},
        {"model null", R"({"model":null})", V::ModelNotString},
        {"model true", R"({"model":true})", V::ModelNotString},
        {"model array", R"({"model":["a"]})", V::ModelNotString},
        {"model object", R"({"model":{"model":"a"}})", V::ModelNotString},
        {"model empty object", R"({"model":{}})", V::ModelNotString},
        {"duplicate", R"({"model":"a","model":"b"})", V::ModelDuplicate},
        {"duplicate same", R"({"model":"a","model":"a"})", V::ModelDuplicate},
        {"duplicate escaped", R"({"model":"a","mod\u0065l":"a"})", V::ModelDuplicate},
        {"duplicate escaped upper", R"({"\u006D\u006F\u0064\u0065\u006C":"a","model":"a"})",
         V::ModelDuplicate},
        {"duplicate non-string", R"({"model":1,"model":"a"})", V::ModelDuplicate},
        {"duplicate apart", R"({"model":"a","x":{"model":1},"model":null})", V::ModelDuplicate},
        // Ok
        {"minimal", R"({"model":"a"})", V::Ok},
        {"empty model", R"({"model":""})", V::Ok},
        {"escaped key", R"({"mod\u0065l":"a"})", V::Ok},
        {"slash-escaped key", R"({"mo\u0064\u0065l":"a"})", V::Ok},
        {"ws everywhere", " \r\n\t{ \"model\" \t:\n \"a\" \r}\n ", V::Ok},
        {"nested model ignored", R"({"x":{"model":"b"},"model":"a","y":[{"model":"c"}]})", V::Ok},
        {"all value kinds",
         R"({"a":[1,-0,0.5,-1.25e-3,1E+9,true,false,null,"s",{},[]],"model":"m","b":{"c":{}}})",
         V::Ok},
        {"unicode model", "{\"model\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"}", V::Ok},
        {"DEL in string", "{\"model\":\"a\x7f\"}", V::Ok},
        {"noncharacter", "{\"model\":\"\xEF\xBF\xBE\"}", V::Ok},
        {"lone surrogate escape", R"({"model":"\ud800"})", V::Ok},
        {"number edge", R"({"model":"a","n":1e999,"m":-0.0e-0})", V::Ok},
    };
    for (const Row &r : rows)
        QTest::newRow(r.name) << r.body << r.verdict;
}

void TestBodyScanner::verdicts()
{
    QFETCH(QByteArray, body);
    QFETCH(BodyScan::Verdict, verdict);
    const BodyScan s = scanBody(body);
    QVERIFY2(s.verdict == verdict, qPrintable(QStringLiteral("got %1 (%2) for %3")
                                                  .arg(QLatin1String(verdictName(s.verdict)),
                                                       s.error, QString::fromLatin1(show(body)))));
    if (verdict == BodyScan::Verdict::NotJson || verdict == BodyScan::Verdict::ModelAmbiguous)
        QVERIFY(!s.error.isEmpty());
    else
        QVERIFY(s.error.isEmpty());
    if (verdict != BodyScan::Verdict::Ok) {
        QCOMPARE(s.valueBegin, qsizetype(-1));
        QCOMPARE(s.valueEnd, qsizetype(-1));
        QVERIFY(s.model.isEmpty());
    }
}

void TestBodyScanner::spans_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QByteArray>("literal"); // the exact bytes of the span

    QTest::newRow("plain") << QByteArray(R"({"model":"gpt-4o"})") << u"gpt-4o"_qs
                           << QByteArray(R"("gpt-4o")");
    QTest::newRow("spaces") << QByteArray("{ \"model\" :  \"x\"  }") << u"x"_qs
                            << QByteArray("\"x\"");
    QTest::newRow("escapes") << QByteArray(R"({"model":"a\"b\\c\/d\ne\u0041\u00e9"})")
                             << QString::fromUtf8("a\"b\\c/d\neA\xC3\xA9")
                             << QByteArray(R"("a\"b\\c\/d\ne\u0041\u00e9")");
    QTest::newRow("pair") << QByteArray(R"({"model":"\ud83d\ude00!"})")
                          << QString::fromUtf8("\xF0\x9F\x98\x80!")
                          << QByteArray(R"("\ud83d\ude00!")");
    QTest::newRow("lone") << QByteArray(R"({"model":"\udc00x"})")
                          << QString(QChar(0xDC00)) + u"x"_qs << QByteArray(R"("\udc00x")");
    QTest::newRow("raw utf8") << QByteArray("{\"model\":\"\xE4\xB8\xAD\xE6\x96\x87\"}")
                              << QString::fromUtf8("\xE4\xB8\xAD\xE6\x96\x87")
                              << QByteArray("\"\xE4\xB8\xAD\xE6\x96\x87\"");
    QTest::newRow("after big") << QByteArray(R"({"messages":[{"content":")" +
                                             QByteArray(1000, 'A') +
                                             R"("}],"model":"m","stream":true})")
                               << u"m"_qs << QByteArray(R"("m")");
    QTest::newRow("escaped key") << QByteArray(R"({"x":1,"mod\u0065l":"y"})") << u"y"_qs
                                 << QByteArray(R"("y")");
}

void TestBodyScanner::spans()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, model);
    QFETCH(QByteArray, literal);
    const BodyScan s = scanBody(body);
    QCOMPARE(int(s.verdict), int(BodyScan::Verdict::Ok));
    QCOMPARE(s.model, model);
    QCOMPARE(body.mid(s.valueBegin, s.valueEnd - s.valueBegin), literal);
    QCOMPARE(s.valueBegin, body.indexOf(literal));
    QCOMPARE(qtDecodeLiteral(literal).value_or(u"<bad>"_qs), model);
}

void TestBodyScanner::nesting()
{
    auto nested = [](int depth) {
        return R"({"model":"m","x":)" + QByteArray(depth - 1, '[') + QByteArray(depth - 1, ']') +
               "}";
    };
    QCOMPARE(int(scanBody(nested(512)).verdict), int(BodyScan::Verdict::Ok));
    const BodyScan deep = scanBody(nested(513));
    QCOMPARE(int(deep.verdict), int(BodyScan::Verdict::NotJson));
    QVERIFY2(deep.error.contains(u"nesting"_qs), qPrintable(deep.error));
    QCOMPARE(int(scanBody(nested(3), 3).verdict), int(BodyScan::Verdict::Ok));
    QCOMPARE(int(scanBody(nested(4), 3).verdict), int(BodyScan::Verdict::NotJson));
    // A million levels must not touch the C++ stack (no recursion).
    const QByteArray huge = QByteArray(1'000'000, '[') + QByteArray(1'000'000, ']');
    QCOMPARE(int(scanBody(huge, 2'000'000).verdict), int(BodyScan::Verdict::NotObject));
    QCOMPARE(int(scanBody(huge).verdict), int(BodyScan::Verdict::NotJson));
}

void TestBodyScanner::streamFlag_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<BodyScan::Stream>("stream");
    using S = BodyScan::Stream;
    QTest::newRow("absent") << QByteArray(R"({"model":"m"})") << S::Absent;
    QTest::newRow("true") << QByteArray(R"({"model":"m","stream":true})") << S::True;
    QTest::newRow("false") << QByteArray(R"({"stream":false,"model":"m"})") << S::False;
    QTest::newRow("null") << QByteArray(R"({"model":"m","stream":null})") << S::Other;
    QTest::newRow("string") << QByteArray(R"({"model":"m","stream":"true"})") << S::Other;
    QTest::newRow("number") << QByteArray(R"({"model":"m","stream":1})") << S::Other;
    QTest::newRow("object") << QByteArray(R"({"model":"m","stream":{}})") << S::Other;
    QTest::newRow("escaped key") << QByteArray(R"({"model":"m","str\u0065am":true})") << S::True;
    QTest::newRow("nested ignored")
        << QByteArray(R"({"model":"m","o":{"stream":true}})") << S::Absent;
    QTest::newRow("in array ignored")
        << QByteArray(R"({"model":"m","o":["stream",true]})") << S::Absent;
    QTest::newRow("last wins") << QByteArray(R"({"stream":true,"model":"m","stream":false})")
                               << S::False;
    QTest::newRow("no model still reported") << QByteArray(R"({"stream":true})") << S::True;
}

void TestBodyScanner::streamFlag()
{
    QFETCH(QByteArray, body);
    QFETCH(BodyScan::Stream, stream);
    QCOMPARE(int(scanBody(body).stream), int(stream));
}

void TestBodyScanner::logprobs_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("wants");
    QTest::newRow("none") << QByteArray(R"({"model":"m"})") << false;
    QTest::newRow("logprobs true") << QByteArray(R"({"model":"m","logprobs":true})") << true;
    QTest::newRow("logprobs false") << QByteArray(R"({"model":"m","logprobs":false})") << false;
    QTest::newRow("logprobs null") << QByteArray(R"({"model":"m","logprobs":null})") << false;
    QTest::newRow("logprobs 0") << QByteArray(R"({"model":"m","logprobs":0})") << true;
    QTest::newRow("logprobs 5") << QByteArray(R"({"model":"m","logprobs":5})") << true;
    QTest::newRow("top_logprobs") << QByteArray(R"({"model":"m","top_logprobs":3})") << true;
    QTest::newRow("echo") << QByteArray(R"({"model":"m","echo":true})") << true;
    QTest::newRow("echo false") << QByteArray(R"({"model":"m","echo":false})") << false;
    QTest::newRow("prompt_logprobs") << QByteArray(R"({"model":"m","prompt_logprobs":{}})") << true;
    QTest::newRow("string") << QByteArray(R"({"model":"m","logprobs":"false"})") << true;
    QTest::newRow("escaped key") << QByteArray(R"({"model":"m","\u0065cho":[]})") << true;
    QTest::newRow("nested ignored")
        << QByteArray(R"({"model":"m","x":{"logprobs":true}})") << false;
    QTest::newRow("one of several")
        << QByteArray(R"({"echo":false,"logprobs":null,"top_logprobs":1})") << true;
    QTest::newRow("last wins off")
        << QByteArray(R"({"model":"m","logprobs":true,"logprobs":false})") << false;
    QTest::newRow("last wins on") << QByteArray(R"({"model":"m","logprobs":false,"logprobs":true})")
                                  << true;
    QTest::newRow("similar key") << QByteArray(R"({"model":"m","logprob":true,"Echo":true})")
                                 << false;
}

void TestBodyScanner::logprobs()
{
    QFETCH(QByteArray, body);
    QFETCH(bool, wants);
    const BodyScan s = scanBody(body);
    QVERIFY(s.verdict != BodyScan::Verdict::NotJson);
    QCOMPARE(s.wantsLogprobs, wants);
}

void TestBodyScanner::errorMessages()
{
    QCOMPARE(scanBody("").error, u"empty body"_qs);
    QVERIFY(scanBody(R"({"model":"a",})").error.contains(u"'}' at byte 13"_qs));
    QVERIFY(scanBody("{\"model\":\"\xFF\"}").error.contains(u"UTF-8"_qs));
    QVERIFY(scanBody(R"({"n":01})").error.contains(u"leading zero"_qs));
    QVERIFY(scanBody(R"({} x)").error.contains(u"trailing data at byte 3"_qs));
    QVERIFY(scanBody(R"({"a":"\q"})").error.contains(u"invalid escape at byte 6"_qs));
}

void TestBodyScanner::literal_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<QByteArray>("literal");
    QTest::newRow("empty") << QString() << QByteArray(R"("")");
    QTest::newRow("plain") << u"gpt-4o"_qs << QByteArray(R"("gpt-4o")");
    QTest::newRow("quote backslash") << u"a\"b\\c"_qs << QByteArray(R"("a\"b\\c")");
    QTest::newRow("controls") << u"\b\f\n\r\t"_qs << QByteArray(R"("\b\f\n\r\t")");
    // DEL and the C1 controls are escaped too (since the catalog relays what backends send):
    // JSON allows them raw, a terminal reading curl's output acts on them.
    QTest::newRow("other controls")
        << QString(QChar(0)) + QChar(0x1f) + QChar(0x7f) << QByteArray("\"\\u0000\\u001f\\u007f\"");
    QTest::newRow("C1 controls") << QString(QChar(0x80)) + QChar(0x9b) + QChar(0xa0)
                                 << QByteArray("\"\\u0080\\u009b\xc2\xa0\"");
    QTest::newRow("slash kept") << u"a/b"_qs << QByteArray(R"("a/b")");
    QTest::newRow("unicode") << QString::fromUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80")
                             << QByteArray("\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"");
    QTest::newRow("lone surrogates")
        << QString(QChar(0xD800)) + u"x"_qs + QChar(0xDFFF) << QByteArray(R"("\ud800x\udfff")");
}

void TestBodyScanner::literal()
{
    QFETCH(QString, value);
    QFETCH(QByteArray, literal);
    QCOMPARE(jsonStringLiteral(value), literal);
    QCOMPARE(qtDecodeLiteral(literal).value_or(u"<bad>"_qs), value);
    // Round trip through our own scanner too.
    const BodyScan s = scanBody("{\"model\":" + literal + "}");
    QCOMPARE(int(s.verdict), int(BodyScan::Verdict::Ok));
    QCOMPARE(s.model, value);
}

void TestBodyScanner::splice()
{
    const QByteArray body =
        " {\"a\" : [1, 2],\n \"mod\\u0065l\" :\t\"old\\u0021\" , \"z\":\"\\u00e9\"} ";
    const BodyScan s = scanBody(body);
    QCOMPARE(int(s.verdict), int(BodyScan::Verdict::Ok));
    QCOMPARE(s.model, u"old!"_qs);
    const QString newModel = QString::fromUtf8("Ne\"w\\ \xE2\x82\xAC\n");
    const QByteArray out = spliceModel(body, s, newModel);
    const QByteArray lit = jsonStringLiteral(newModel);
    QCOMPARE(out, body.left(s.valueBegin) + lit + body.mid(s.valueEnd));
    const BodyScan again = scanBody(out);
    QCOMPARE(int(again.verdict), int(BodyScan::Verdict::Ok));
    QCOMPARE(again.model, newModel);
    QCOMPARE(again.valueBegin, s.valueBegin);
    QCOMPARE(again.valueEnd, s.valueBegin + lit.size());
    // Same length rename keeps the size; the escapes elsewhere are untouched.
    QCOMPARE(spliceModel(R"({"model":"abc","x":"\/"})", scanBody(R"({"model":"abc","x":"\/"})"),
                         u"xyz"_qs),
             QByteArray(R"({"model":"xyz","x":"\/"})"));
}

void TestBodyScanner::differential()
{
    bool ok = false;
    quint32 seed = qEnvironmentVariableIntValue("SLP_TEST_SEED", &ok);
    if (!ok)
        seed = 20240601;
    qInfo("differential seed: %u (set SLP_TEST_SEED to change)", seed);
    Gen gen(seed);

    const int generatedCount = 10000;
    const int mutantsPerBody = 3;
    int compared = 0, spliced = 0;
    QMap<QByteArray, int> verdicts;
    QMap<QByteArray, int> excluded;

    static const QString newModels[] = {u"renamed"_qs,
                                        QString(),
                                        u"with \"quotes\" and \\ and /"_qs,
                                        u"ctl\n\t\x01"_qs,
                                        QString::fromUtf8("\xE4\xB8\xAD\xF0\x9F\x98\x80"),
                                        QString(QChar(0xD800)),
                                        QString(200, QLatin1Char('x'))};

    auto check = [&](const QByteArray &body) -> bool {
        const BodyScan ours = scanBody(body);
        const QtVerdict qt = qtVerdict(body);
        ++compared;
        verdicts[verdictName(ours.verdict)]++;
        const bool oursValid = ours.verdict != BodyScan::Verdict::NotJson;
        auto failWith = [&](const QString &what) {
            qWarning().noquote() << "seed" << seed << "body:" << show(body);
            qWarning().noquote() << "ours:" << verdictName(ours.verdict) << ours.error
                                 << "qt error:" << int(qt.error);
            QTest::qFail(qPrintable(what), __FILE__, __LINE__);
            return false;
        };
        if (oursValid != qt.valid) {
            if (const char *why = knownDifference(body, ours, qt)) {
                excluded[why]++;
                return true;
            }
            return failWith(QStringLiteral("validity differs from QJsonDocument"));
        }
        if (!oursValid)
            return true;
        if ((ours.verdict != BodyScan::Verdict::NotObject) != qt.isObject)
            return failWith(QStringLiteral("object-or-not differs"));
        if (!qt.isObject)
            return true;
        const QJsonObject &o = qt.object;
        if (ours.stream != expectedStream(o))
            return failWith(QStringLiteral("stream differs"));
        if (ours.wantsLogprobs != expectedLogprobs(o))
            return failWith(QStringLiteral("wantsLogprobs differs"));
        const bool hasModel = o.contains(QLatin1String("model"));
        const QJsonValue mv = o.value(QLatin1String("model"));
        switch (ours.verdict) {
        case BodyScan::Verdict::ModelMissing:
            if (hasModel)
                return failWith(QStringLiteral("ModelMissing but QJsonObject has model"));
            return true;
        case BodyScan::Verdict::ModelNotString:
            if (!hasModel || mv.isString())
                return failWith(QStringLiteral("ModelNotString disagrees"));
            return true;
        case BodyScan::Verdict::ModelDuplicate:
            // QJsonObject keeps only the last duplicate; generated bodies check the count.
            if (!hasModel)
                return failWith(QStringLiteral("ModelDuplicate but no model"));
            return true;
        case BodyScan::Verdict::ModelAmbiguous: {
            // A case variant of "model" at the top level, as Go's decoder would take it.
            const QStringList keys = o.keys();
            const bool variant = std::any_of(keys.begin(), keys.end(), [](const QString &k) {
                return k != QLatin1String("model") &&
                       k.compare(QLatin1String("model"), Qt::CaseInsensitive) == 0;
            });
            if (!variant)
                return failWith(QStringLiteral("ModelAmbiguous without a case variant"));
            return true;
        }
        default:
            break;
        }
        if (!mv.isString() || mv.toString() != ours.model)
            return failWith(QStringLiteral("model value differs: ours '%1' qt '%2'")
                                .arg(ours.model, mv.toString()));
        const QByteArray span = body.mid(ours.valueBegin, ours.valueEnd - ours.valueBegin);
        if (!span.startsWith('"') || !span.endsWith('"') || span.size() < 2 ||
            qtDecodeLiteral(span) != std::optional<QString>(ours.model))
            return failWith(QStringLiteral("span does not decode to the model: ") +
                            QString::fromLatin1(show(span)));

        // Splice: only the span changes, and the document is otherwise identical.
        const QString &nm = newModels[gen.below(int(std::size(newModels)))];
        const QByteArray lit = jsonStringLiteral(nm);
        const QByteArray out = spliceModel(body, ours, nm);
        if (out.size() != body.size() - span.size() + lit.size() ||
            out.left(ours.valueBegin) != body.left(ours.valueBegin) ||
            out.mid(ours.valueBegin + lit.size()) != body.mid(ours.valueEnd) ||
            out.mid(ours.valueBegin, lit.size()) != lit)
            return failWith(QStringLiteral("splice touched bytes outside the span"));
        QJsonParseError err;
        QJsonObject after = QJsonDocument::fromJson(out, &err).object();
        if (err.error != QJsonParseError::NoError || after.value(QLatin1String("model")) != nm)
            return failWith(QStringLiteral("spliced body lost the new model"));
        QJsonObject before = o;
        before.remove(QLatin1String("model"));
        after.remove(QLatin1String("model"));
        if (before != after)
            return failWith(QStringLiteral("spliced body differs outside model"));
        const BodyScan re = scanBody(out);
        if (re.verdict != BodyScan::Verdict::Ok || re.model != nm ||
            re.valueBegin != ours.valueBegin || re.valueEnd != ours.valueBegin + lit.size())
            return failWith(QStringLiteral("rescan of spliced body differs"));
        ++spliced;
        return true;
    };

    int duplicatesChecked = 0;
    for (int i = 0; i < generatedCount; ++i) {
        const QByteArray body = gen.body();
        const BodyScan s = scanBody(body);
        // Generated bodies are always valid RFC 8259 JSON.
        QVERIFY2(s.verdict != BodyScan::Verdict::NotJson,
                 qPrintable(s.error + u" in "_qs + QString::fromLatin1(show(body))));
        if (!check(body))
            return;
        if (body.trimmed().startsWith('{')) {
            const int n = gen.topModelKeys();
            const auto expected = gen.topModelVariant() ? BodyScan::Verdict::ModelAmbiguous
                                  : n >= 2              ? BodyScan::Verdict::ModelDuplicate
                                  : n == 0              ? BodyScan::Verdict::ModelMissing
                                                        : s.verdict;
            QVERIFY2(s.verdict == expected && (n != 1 || gen.topModelVariant() ||
                                               (s.verdict == BodyScan::Verdict::Ok ||
                                                s.verdict == BodyScan::Verdict::ModelNotString)),
                     qPrintable(QStringLiteral("%1 model keys but %2: %3")
                                    .arg(n)
                                    .arg(QLatin1String(verdictName(s.verdict)),
                                         QString::fromLatin1(show(body)))));
            if (n >= 2)
                ++duplicatesChecked;
        }
        for (int m = 0; m < mutantsPerBody; ++m)
            if (!check(gen.mutate(body)))
                return;
    }

    qInfo("compared %d bodies (%d spliced, %d duplicate-model)", compared, spliced,
          duplicatesChecked);
    for (auto it = verdicts.cbegin(); it != verdicts.cend(); ++it)
        qInfo("  verdict %-15s %d", it.key().constData(), it.value());
    for (auto it = excluded.cbegin(); it != excluded.cend(); ++it)
        qInfo("  excluded (known difference) %-60s %d", it.key().constData(), it.value());
    // Every verdict must have been exercised, or the generator has drifted.
    for (const char *v :
         {"Ok", "NotJson", "NotObject", "ModelMissing", "ModelNotString", "ModelDuplicate"})
        QVERIFY2(verdicts.value(v) > 20, v);
    QVERIFY(spliced > 500);
}

void TestBodyScanner::throughput()
{
    const QByteArray body = bigBase64Body(22 * 1000 * 1000);
    BodyScan s;
    // Best of a few timed runs, for a number in the log; nothing is asserted on time.
    qint64 bestNs = std::numeric_limits<qint64>::max();
    for (int i = 0; i < 5; ++i) {
        QElapsedTimer t;
        t.start();
        s = scanBody(body);
        bestNs = std::min(bestNs, t.nsecsElapsed());
    }
    QCOMPARE(int(s.verdict), int(BodyScan::Verdict::Ok));
    QCOMPARE(s.model, u"mistral-small-4"_qs);
    QCOMPARE(int(s.stream), int(BodyScan::Stream::False));
    qInfo("scanBody: %.1f MB in %.2f ms = %.0f MB/s (best of 5)", body.size() / 1e6, bestNs / 1e6,
          body.size() / 1e6 / (bestNs / 1e9));

    // The same size of non-ASCII text (3-byte UTF-8) takes the slower validating path.
    const QByteArray cjk = R"({"model":"m","text":")" +
                           QByteArray("\xE4\xB8\xAD\xE6\x96\x87 abc").repeated(2'000'000) + R"("})";
    QElapsedTimer t;
    t.start();
    QCOMPARE(int(scanBody(cjk).verdict), int(BodyScan::Verdict::Ok));
    qInfo("scanBody (UTF-8 text): %.1f MB in %.2f ms = %.0f MB/s", cjk.size() / 1e6,
          t.nsecsElapsed() / 1e6, cjk.size() / 1e6 / (t.nsecsElapsed() / 1e9));

    // Many small tokens (numbers, short keys and objects): the walk's per-step cost shows here.
    QByteArray tokens = R"({"model":"m","rows":[)";
    for (int i = 0; i < 600'000; ++i)
        tokens += R"({"i":12345,"x":-1.5e3,"ok":true,"t":"ab"},)";
    tokens += R"({}]})";
    qint64 tokensNs = std::numeric_limits<qint64>::max();
    for (int i = 0; i < 3; ++i) {
        QElapsedTimer tt;
        tt.start();
        QCOMPARE(int(scanBody(tokens).verdict), int(BodyScan::Verdict::Ok));
        tokensNs = std::min(tokensNs, tt.nsecsElapsed());
    }
    qInfo("scanBody (small tokens): %.1f MB in %.2f ms = %.0f MB/s (best of 3)",
          tokens.size() / 1e6, tokensNs / 1e6, tokens.size() / 1e6 / (tokensNs / 1e9));
}

void TestBodyScanner::benchmark()
{
    static const QByteArray body = bigBase64Body(22 * 1000 * 1000);
    BodyScan s;
    QBENCHMARK
    {
        s = scanBody(body);
    }
    QCOMPARE(int(s.verdict), int(BodyScan::Verdict::Ok));
}

QTEST_APPLESS_MAIN(TestBodyScanner)
#include "tst_body_scanner.moc"
