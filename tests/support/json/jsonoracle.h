// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// The independent check of daemon/body's scanner: QJsonDocument's reading of the same bytes,
// and the differences between the two that bodyscanner.h's closing comment documents.
// Shared by tst_body_scanner and fuzz_body_scanner, so both allow exactly the same ones.
#include "body/bodyscanner.h"

#include <QByteArray>
#include <QJsonObject>
#include <QJsonParseError>
#include <QString>

#include <optional>

namespace slp::test {

// What QJsonDocument says about a body: valid?, and the object when it is one.
struct QtVerdict
{
    bool valid = false;
    bool isObject = false;
    QJsonObject object;
    QJsonParseError::ParseError error = QJsonParseError::NoError;
};

// A top-level scalar is JSON to RFC 8259 but QJsonDocument refuses any non-container, so a
// scalar is checked wrapped in [ ].
QtVerdict qtVerdict(const QByteArray &body);

// When the scanner and QJsonDocument disagree on validity: the documented difference it is
// (a category for the log), or nullptr when it is none of them.
const char *knownDifference(const QByteArray &body, const BodyScan &ours, const QtVerdict &qt);

// The stream flag and the logprobs wish the scanner should report for a parsed object.
BodyScan::Stream expectedStream(const QJsonObject &o);
bool expectedLogprobs(const QJsonObject &o);

// Decodes a JSON string literal (with its quotes) through QJsonDocument; nullopt when it is
// not exactly one string.
std::optional<QString> qtDecodeLiteral(const QByteArray &literal);

} // namespace slp::test
