// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

namespace slp {

// `bytes` from `from` to `to`, sharing its storage: one more reference to the same block, no
// copy (an out-of-range span is clamped). A slice that ends before the block does is not
// NUL-terminated; it is read through constData() and size() only, as sockets read it.
QByteArray sharedSlice(const QByteArray &bytes, qsizetype from, qsizetype to);

// One change to a run of bytes: `removed` bytes at `at` give way to `inserted`.
struct ByteEdit
{
    qsizetype at = 0;
    qsizetype removed = 0;
    QByteArray inserted;
};

// A message's bytes as the pieces they go out in: the client's bytes shared, what SLP
// rewrites as small pieces of its own. A renamed 60 MB body is the original block seen
// through two slices plus the new model value, never a second 60 MB copy; a socket writes
// the pieces with one gather call.
class ByteChain
{
public:
    ByteChain() = default;
    // A whole body is a chain of one piece (implicit: most bodies go out unchanged).
    ByteChain(QByteArray whole); // NOLINT(google-explicit-constructor)

    // `bytes` with `edits` applied (any order; overlapping or out-of-range edits leave
    // `bytes` as it is), every other byte shared with `bytes`.
    static ByteChain edited(const QByteArray &bytes, QList<ByteEdit> edits);

    void append(QByteArray piece);
    void append(const ByteChain &more);

    qsizetype size() const { return m_size; }
    bool isEmpty() const { return m_size == 0; }
    const QList<QByteArray> &pieces() const { return m_pieces; }
    // The chain from byte `offset` on, still shared.
    ByteChain from(qsizetype offset) const;
    // One contiguous copy: for a small message, a test, or a reader that needs it whole.
    QByteArray joined() const;

private:
    QList<QByteArray> m_pieces; // none empty
    qsizetype m_size = 0;
};

} // namespace slp
