//! Names of real Kafka properties: the ones the model uses and the ones it accepts but ignores.
//!
//! A user pastes a real consumer config into `[consumer.config]`; every real property name must
//! be accepted, and a typo must not be. Modeled names are listed in `config.rs`; this module
//! lists the real names the model has no use for, so they go into `ignored` instead of being
//! rejected. Sources: Java `ConsumerConfig.java`, `CommonClientConfigs.java`, `SslConfigs.java`,
//! `SaslConfigs.java` (apache/kafka clients), librdkafka `CONFIGURATION.md` (global and consumer
//! properties), and the group coordinator / core broker configs (`GroupCoordinatorConfig.java`,
//! `KafkaConfig`); the broker list covers the settings a group-rebalance study is likely to
//! carry, not all of the broker's several hundred.

/// Java consumer properties (apache/kafka `ConsumerConfig` and the common client, SSL and SASL
/// configs it defines) that the model does not use.
pub(crate) const JAVA_CONSUMER_IGNORED: &[&str] = &[
    "allow.auto.create.topics",
    "auto.include.jmx.reporter",
    "bootstrap.servers",
    "check.crcs",
    "client.dns.lookup",
    "client.rack",
    "connections.max.idle.ms",
    "default.api.timeout.ms",
    "enable.metrics.push",
    "exclude.internal.topics",
    "fetch.max.bytes",
    "fetch.min.bytes",
    "group.id",
    "group.instance.id",
    "group.protocol",
    "group.remote.assignor",
    "interceptor.classes",
    "internal.leave.group.on.close",
    "internal.throw.on.fetch.stable.offset.unsupported",
    "isolation.level",
    "key.deserializer",
    "max.partition.fetch.bytes",
    "metadata.recovery.rebootstrap.trigger.ms",
    "metadata.recovery.strategy",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.recording.level",
    "metrics.sample.window.ms",
    "partition.assignment.strategy",
    "receive.buffer.bytes",
    "reconnect.backoff.max.ms",
    "reconnect.backoff.ms",
    "retry.backoff.max.ms",
    "sasl.client.callback.handler.class",
    "sasl.jaas.config",
    "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.service.name",
    "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.login.connect.timeout.ms",
    "sasl.login.read.timeout.ms",
    "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds",
    "sasl.login.refresh.window.factor",
    "sasl.login.refresh.window.jitter",
    "sasl.login.retry.backoff.max.ms",
    "sasl.login.retry.backoff.ms",
    "sasl.mechanism",
    "sasl.oauthbearer.clock.skew.seconds",
    "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name",
    "sasl.oauthbearer.token.endpoint.url",
    "security.protocol",
    "security.providers",
    "send.buffer.bytes",
    "socket.connection.setup.timeout.max.ms",
    "socket.connection.setup.timeout.ms",
    "ssl.cipher.suites",
    "ssl.enabled.protocols",
    "ssl.endpoint.identification.algorithm",
    "ssl.engine.factory.class",
    "ssl.key.password",
    "ssl.keymanager.algorithm",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.keystore.type",
    "ssl.protocol",
    "ssl.provider",
    "ssl.secure.random.implementation",
    "ssl.trustmanager.algorithm",
    "ssl.truststore.certificates",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.type",
    "value.deserializer",
];

/// librdkafka-only global and consumer properties (`CONFIGURATION.md`) that the model does not
/// use. librdkafka names shared with Java (session.timeout.ms, ...) are handled as Java names;
/// `fetch.wait.max.ms` is mapped to `fetch.max.wait.ms` (see `config.rs`).
pub(crate) const LIBRDKAFKA_CONSUMER_IGNORED: &[&str] = &[
    "api.version.fallback.ms",
    "api.version.request",
    "api.version.request.timeout.ms",
    "auto.commit.enable",
    "broker.address.family",
    "broker.address.ttl",
    "broker.version.fallback",
    "builtin.features",
    "consume.callback.max.messages",
    "coordinator.query.interval.ms",
    "debug",
    "enable.auto.offset.store",
    "enable.partition.eof",
    "enable.random.seed",
    "enable.sasl.oauthbearer.unsecure.jwt",
    "enable.sparse.connections",
    "enable.ssl.certificate.verification",
    "fetch.error.backoff.ms",
    "fetch.message.max.bytes",
    "fetch.queue.backoff.ms",
    "group.protocol.type",
    "log.connection.close",
    "log.queue",
    "log.thread.name",
    "log_level",
    "max.in.flight",
    "max.in.flight.requests.per.connection",
    "message.copy.max.bytes",
    "message.max.bytes",
    "metadata.broker.list",
    "offset.store.method",
    "offset.store.path",
    "offset.store.sync.interval.ms",
    "queued.max.messages.kbytes",
    "queued.min.messages",
    "receive.message.max.bytes",
    "sasl.mechanisms",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.config",
    "sasl.oauthbearer.extensions",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.token.endpoint.url",
    "sasl.password",
    "sasl.username",
    "socket.keepalive.enable",
    "socket.max.fails",
    "socket.nagle.disable",
    "socket.receive.buffer.bytes",
    "socket.send.buffer.bytes",
    "socket.timeout.ms",
    "ssl.ca.location",
    "ssl.ca.pem",
    "ssl.certificate.location",
    "ssl.certificate.pem",
    "ssl.crl.location",
    "ssl.key.location",
    "ssl.key.pem",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl_key",
    "statistics.interval.ms",
    "topic.blacklist",
    "topic.metadata.propagation.max.ms",
    "topic.metadata.refresh.fast.interval.ms",
    "topic.metadata.refresh.sparse",
];

/// Broker properties (Apache Kafka) that the model does not use: the group coordinator's and
/// the common core ones.
pub(crate) const BROKER_IGNORED: &[&str] = &[
    "auto.create.topics.enable",
    "auto.leader.rebalance.enable",
    "broker.id",
    "broker.rack",
    "compression.type",
    "controller.quorum.voters",
    "default.replication.factor",
    "delete.topic.enable",
    "group.consumer.assignors",
    "group.consumer.max.heartbeat.interval.ms",
    "group.consumer.max.session.timeout.ms",
    "group.consumer.max.size",
    "group.consumer.migration.policy",
    "group.consumer.min.heartbeat.interval.ms",
    "group.consumer.min.session.timeout.ms",
    "group.coordinator.append.linger.ms",
    "group.coordinator.rebalance.protocols",
    "group.coordinator.threads",
    "group.max.size",
    "group.share.enable",
    "listeners",
    "log.dirs",
    "log.retention.bytes",
    "log.retention.hours",
    "log.retention.ms",
    "log.segment.bytes",
    "message.max.bytes",
    "min.insync.replicas",
    "node.id",
    "num.io.threads",
    "num.network.threads",
    "num.partitions",
    "num.recovery.threads.per.data.dir",
    "offset.metadata.max.bytes",
    "offsets.commit.timeout.ms",
    "offsets.load.buffer.size",
    "offsets.retention.check.interval.ms",
    "offsets.retention.minutes",
    "offsets.topic.compression.codec",
    "offsets.topic.num.partitions",
    "offsets.topic.replication.factor",
    "offsets.topic.segment.bytes",
    "process.roles",
    "replica.fetch.max.bytes",
    "replica.lag.time.max.ms",
    "socket.receive.buffer.bytes",
    "socket.request.max.bytes",
    "socket.send.buffer.bytes",
    "transaction.state.log.min.isr",
    "transaction.state.log.replication.factor",
    "unclean.leader.election.enable",
    "zookeeper.connect",
];

/// Whether `name` is a real consumer property (Java or librdkafka) the model ignores.
pub(crate) fn is_ignored_consumer_property(name: &str) -> bool {
    JAVA_CONSUMER_IGNORED.contains(&name) || LIBRDKAFKA_CONSUMER_IGNORED.contains(&name)
}

/// Whether `name` is a real broker property the model ignores.
pub(crate) fn is_ignored_broker_property(name: &str) -> bool {
    BROKER_IGNORED.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_sorted_and_free_of_duplicates() {
        for list in [JAVA_CONSUMER_IGNORED, LIBRDKAFKA_CONSUMER_IGNORED, BROKER_IGNORED] {
            for pair in list.windows(2) {
                assert!(pair[0] < pair[1], "{} before {}", pair[0], pair[1]);
            }
        }
    }

    #[test]
    fn real_names_are_recognised() {
        assert!(is_ignored_consumer_property("fetch.max.bytes"));
        assert!(is_ignored_consumer_property("isolation.level"));
        assert!(is_ignored_consumer_property("queued.min.messages"));
        assert!(!is_ignored_consumer_property("session.timeout"));
        assert!(is_ignored_broker_property("offsets.retention.minutes"));
        assert!(!is_ignored_broker_property("group.initial.rebalance.delay"));
    }
}
