// SPDX-License-Identifier: GPL-3.0-or-later
#include "monitorapp.h"

#include "desktopnotifier.h"
#include "monitorwindow.h"
#include "noticepolicy.h"
#include "plaintext.h"
#include "routetablemodel.h"
#include "settingsdialog.h"
#include "statusicons.h"
#include "statuspoller.h"
#include "statustext.h"
#include "systemdunit.h"
#include "systemdunitreader.h"

#include <QAction>
#include <QApplication>
#include <QLoggingCategory>
#include <QMenu>
#include <QSettings>
#include <QSystemTrayIcon>

Q_LOGGING_CATEGORY(lcMonitor, "slp.monitor")

namespace slp::monitor {

MonitorApp::MonitorApp(const MonitorSettings &saved, const MonitorCommandLine &commandLine,
                       QObject *parent)
    : QObject(parent), m_settings(withCommandLine(saved, commandLine)),
      m_poller(new StatusPoller(this)), m_routes(new RouteTableModel(this)),
      m_notifier(new DesktopNotifier(this))
{
    connect(m_poller, &StatusPoller::pollFinished, this, &MonitorApp::onPollFinished);

    const bool haveTray = QSystemTrayIcon::isSystemTrayAvailable();
    m_window = std::make_unique<MonitorWindow>(m_routes, !haveTray);
    connect(m_window.get(), &MonitorWindow::refreshRequested, m_poller, &StatusPoller::pollNow);
    connect(m_window.get(), &MonitorWindow::settingsRequested, this, &MonitorApp::openSettings);
    connect(m_window.get(), &MonitorWindow::quitRequested, qApp, &QCoreApplication::quit);
    if (!haveTray)
        return;

    m_menu = std::make_unique<QMenu>();
    m_headerAction = m_menu->addAction(QStringLiteral("SLP"));
    m_headerAction->setEnabled(false);
    m_trafficAction = m_menu->addAction(QString());
    m_trafficAction->setEnabled(false);
    m_trafficAction->setVisible(false);
    m_menu->addSeparator();
    m_routesEnd = m_menu->addSeparator();
    m_menu->addAction(QStringLiteral("Refresh"), m_poller, &StatusPoller::pollNow);
    m_menu->addAction(QStringLiteral("Open window"), this, &MonitorApp::showWindow);
    m_menu->addAction(QStringLiteral("Settings\u2026"), this, &MonitorApp::openSettings);
    m_menu->addSeparator();
    m_menu->addAction(QStringLiteral("Quit"), qApp, &QCoreApplication::quit);

    m_tray = new QSystemTrayIcon(waitingIcon(), this);
    m_tray->setContextMenu(m_menu.get());
    connect(m_tray, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason r) {
        if (r == QSystemTrayIcon::Trigger || r == QSystemTrayIcon::DoubleClick) {
            if (m_window->isVisible() && r == QSystemTrayIcon::Trigger)
                m_window->hide();
            else
                showWindow();
        }
    });
    m_notifier->setTray(m_tray);
}

MonitorApp::~MonitorApp() = default;

void MonitorApp::applyCaFile()
{
    QList<QSslCertificate> certificates;
    if (!m_settings.caFile.isEmpty()) {
        QString why;
        if (const auto loaded = loadCaFile(m_settings.caFile, &why))
            certificates = *loaded;
        else
            qCWarning(lcMonitor).noquote() << "CA file not used:" << why;
    }
    m_poller->setCaCertificates(certificates);
}

void MonitorApp::start()
{
    applyCaFile();
    m_poller->setBaseUrl(m_settings.url);
    m_poller->setInterval(m_settings.interval);
    m_poller->setTimeout(StatusPoller::defaultTimeout(m_settings.interval));
    m_window->showWaiting(m_settings.url);
    if (m_tray) {
        // Dialogs closing must not end a tray app.
        QApplication::setQuitOnLastWindowClosed(false);
        m_tray->setToolTip(QStringLiteral("SLP %1: polling\u2026").arg(m_settings.url.toString()));
        m_tray->show();
        qCInfo(lcMonitor).noquote()
            << "running in the system tray, polling" << m_settings.url.toString() << "every"
            << formatInterval(m_settings.interval);
    } else {
        m_window->show();
        qCInfo(lcMonitor).noquote()
            << "no system tray: running as a window, polling" << m_settings.url.toString()
            << "every" << formatInterval(m_settings.interval);
    }
    m_poller->start();
}

void MonitorApp::onPollFinished(const PollResult &result)
{
    const StatusUpdate update = m_model.apply(readSnapshot(result));
    for (const Transition &t : update.transitions)
        qCInfo(lcMonitor).noquote() << describe(t);
    if (update.first)
        qCInfo(lcMonitor).noquote() << "first poll:" << headline(update.snapshot);

    m_routes->setRoutes(update.snapshot.routes);
    m_window->showStatus(update.snapshot);
    updateTray(update.snapshot);
    readUnit();

    if (!m_settings.notifications)
        return;
    for (const Notice &notice : noticesFor(update))
        m_notifier->show(notice);
}

void MonitorApp::updateTray(const StatusSnapshot &snapshot)
{
    if (!m_tray)
        return;
    m_tray->setIcon(healthIcon(snapshot.health));
    m_tray->setToolTip(autoTextLiteral(tooltipText(snapshot)));
    m_headerAction->setText(QStringLiteral("SLP \u2014 %1").arg(headline(snapshot)));
    m_headerAction->setIcon(healthIcon(snapshot.health));
    m_trafficAction->setText(trafficHeadline(snapshot));
    m_trafficAction->setVisible(snapshot.reachable);
    updateMenuRoutes(snapshot);
}

void MonitorApp::updateMenuRoutes(const StatusSnapshot &snapshot)
{
    QStringList texts;
    for (const RouteStatus &r : snapshot.routes)
        texts << routeLine(r);
    // Rebuilt only when something changed: the user may have the menu open.
    if (texts == m_routeTexts)
        return;
    m_routeTexts = texts;
    for (QAction *a : std::as_const(m_routeActions)) {
        m_menu->removeAction(a);
        a->deleteLater();
    }
    m_routeActions.clear();
    for (qsizetype i = 0; i < snapshot.routes.size(); ++i) {
        auto *action = new QAction(routeIcon(snapshot.routes[i]), texts[i], m_menu.get());
        connect(action, &QAction::triggered, this, &MonitorApp::showWindow);
        m_menu->insertAction(m_routesEnd, action);
        m_routeActions << action;
    }
}

void MonitorApp::readUnit()
{
    if (!isLocalUrl(m_settings.url)) {
        m_window->showUnit(std::nullopt);
        return;
    }
    if (!m_unitReader) {
        m_unitReader = new SystemdUnitReader(QDBusConnection::systemBus(), kSlpUnit, this);
        connect(
            m_unitReader, &SystemdUnitReader::statusRead, this,
            [this](const UnitStatus &status) {
                // A read begun before the URL moved to another machine says nothing of it.
                if (isLocalUrl(m_settings.url))
                    m_window->showUnit(status);
            });
        connect(m_unitReader, &SystemdUnitReader::unavailable, this,
                [this] { m_window->showUnit(std::nullopt); });
    }
    m_unitReader->refresh();
}

void MonitorApp::showWindow()
{
    m_window->show();
    m_window->raise();
    m_window->activateWindow();
}

void MonitorApp::openSettings()
{
    SettingsDialog dialog(m_settings, m_window->isVisible() ? m_window.get() : nullptr);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const MonitorSettings chosen = dialog.settings();
    QSettings store;
    chosen.save(store);
    applySettings(chosen);
}

void MonitorApp::applySettings(const MonitorSettings &settings)
{
    const bool urlChanged = settings.url != m_settings.url;
    m_settings = settings;
    applyCaFile();
    m_poller->setInterval(settings.interval);
    m_poller->setTimeout(StatusPoller::defaultTimeout(settings.interval));
    if (urlChanged) {
        // Another SLP: its first poll is a start-up, not a storm of transitions.
        m_model.reset();
        m_window->showWaiting(settings.url);
        m_poller->setBaseUrl(settings.url);
    }
    m_poller->pollNow();
}

} // namespace slp::monitor
