// SPDX-License-Identifier: GPL-3.0-or-later
#include "discovery/modellistparser.h"

#include <QThread>

#include <memory>

namespace slp {

ModelListParser::ModelListParser(QObject *parent) : QObject(parent)
{}

ModelListParser::~ModelListParser()
{
    if (m_thread) {
        m_thread->disconnect(this);
        m_thread->wait();
        delete m_thread;
    }
}

void ModelListParser::parse(QByteArray json)
{
    auto result = std::make_shared<ModelList>();
    QThread *thread = QThread::create([json = std::move(json), result]() mutable {
        *result = parseModelList(json);
        json = QByteArray(); // the text goes now, not with the thread object
    });
    m_thread = thread;
    connect(thread, &QThread::finished, this, [this, thread, result] {
        if (m_thread == thread) {
            m_thread = nullptr;
        }
        thread->deleteLater();
        Q_EMIT parsed(*result);
    });
    thread->start();
}

} // namespace slp
