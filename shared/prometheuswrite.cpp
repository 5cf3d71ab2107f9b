// SPDX-License-Identifier: GPL-3.0-or-later
// The writing half of the Prometheus text format (the daemon's /metrics); prometheustext.cpp
// reads it (the monitor, the tests).
#include "prometheustext.h"

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

namespace slp {

namespace {

// Go's strconv.FormatFloat(v, 'g', -1, 64), which client_golang writes: the shortest digits
// that round-trip, in exponent form when the decimal exponent is < -4 or >= 6 (1e+06, 1.5e-05,
// at least two exponent digits), so our /metrics reads like any Go exporter's.
QByteArray goFormatG(double v)
{
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    // buf: [-]d[.ddd]e[+-]XX
    std::string_view sci(buf, size_t(res.ptr - buf));
    const bool neg = sci.front() == '-';
    if (neg)
        sci.remove_prefix(1);
    const size_t ePos = sci.find('e');
    std::string digits;
    for (char c : sci.substr(0, ePos))
        if (c != '.')
            digits += c;
    int exp = 0;
    std::from_chars(sci.data() + ePos + 1 + (sci[ePos + 1] == '+' ? 1 : 0), sci.data() + sci.size(),
                    exp);
    while (digits.size() > 1 && digits.back() == '0')
        digits.pop_back();

    QByteArray out;
    if (neg)
        out += '-';
    if (exp < -4 || exp >= 6) {
        out += digits[0];
        if (digits.size() > 1) {
            out += '.';
            out += QByteArray(digits.data() + 1, qsizetype(digits.size() - 1));
        }
        out += 'e';
        out += exp < 0 ? '-' : '+';
        const int a = exp < 0 ? -exp : exp;
        if (a < 10)
            out += '0';
        out += QByteArray::number(a);
        return out;
    }
    const int nd = int(digits.size());
    const int dp = exp + 1; // digits before the decimal point
    if (dp <= 0) {
        out += "0.";
        out += QByteArray(-dp, '0');
        out += QByteArray(digits.data(), nd);
    } else if (dp >= nd) {
        out += QByteArray(digits.data(), nd);
        out += QByteArray(dp - nd, '0');
    } else {
        out += QByteArray(digits.data(), dp);
        out += '.';
        out += QByteArray(digits.data() + dp, nd - dp);
    }
    return out;
}

// The text format escapes backslash and newline in HELP lines, and the double quote too in
// label values.
QString escapePromText(const QString &text, bool quotes)
{
    QString out;
    out.reserve(text.size());
    for (const QChar c : text)
        if (c == u'\\')
            out += u"\\\\";
        else if (quotes && c == u'"')
            out += u"\\\"";
        else if (c == u'\n')
            out += u"\\n";
        else
            out += c;
    return out;
}

} // namespace

QString escapePromLabelValue(const QString &value)
{
    return escapePromText(value, true);
}

QString escapePromHelp(const QString &help)
{
    return escapePromText(help, false);
}

QByteArray formatPromValue(double value)
{
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    return goFormatG(value);
}

QByteArray promSampleLine(const QByteArray &name, const PromLabels &labels, double value)
{
    QByteArray out = name;
    if (!labels.isEmpty()) {
        out += '{';
        bool first = true;
        for (const auto &[label, v] : labels) {
            if (!first)
                out += ',';
            first = false;
            out += label.toUtf8();
            out += "=\"";
            out += escapePromLabelValue(v).toUtf8();
            out += '"';
        }
        out += '}';
    }
    out += ' ';
    out += formatPromValue(value);
    out += '\n';
    return out;
}

QByteArray promHelpLine(const QByteArray &name, const QString &help)
{
    return "# HELP " + name + ' ' + escapePromHelp(help).toUtf8() + '\n';
}

QByteArray promTypeLine(const QByteArray &name, const QByteArray &type)
{
    return "# TYPE " + name + ' ' + type + '\n';
}

} // namespace slp
