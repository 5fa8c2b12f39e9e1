// Unit tests of realrun.Member without a broker (`mvn -q test` in scripts/real/member-java;
// scripts/real/ci_kafka.sh runs them). Fixtures shared with the Python side, whose own tests
// (scripts/real/tests/test_member_java.py) check them against member.py, recorder.load_record
// and javamember.member_config: ../tests/member_record.jsonl, ../tests/java_member_configs.json.
package realrun;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.MockConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class MemberTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path PY_TESTS = Path.of("..", "tests");
  private static final TopicPartition P0 = new TopicPartition("events", 0);
  private static final TopicPartition P1 = new TopicPartition("events", 1);
  private static final TopicPartition P3 = new TopicPartition("events", 3);

  /** A clock whose t0 is now: now() counts from 0. */
  private static Member.Clock clock() {
    return new Member.Clock(System.currentTimeMillis() / 1e3);
  }

  private static List<JsonNode> lines(StringWriter out) throws IOException {
    List<JsonNode> list = new ArrayList<>();
    for (String line : out.toString().split("\n")) {
      if (!line.isEmpty()) {
        list.add(JSON.readTree(line));
      }
    }
    return list;
  }

  private static Set<String> keys(JsonNode o) {
    Set<String> keys = new TreeSet<>();
    o.fieldNames().forEachRemaining(keys::add);
    return keys;
  }

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  // ---- the record's lines ----

  @Test
  void linesAreByteForByteTheSharedFixture() throws IOException {
    ConsumerRecord<byte[], String> r = new ConsumerRecord<>("events", 3, 7L, null, "0.125");
    List<ObjectNode> built =
        List.of(
            Member.mark("start", 0.5),
            Member.callbackLine("assign", 1.25, List.of(P0, P3)),
            Member.processed(r, 1.5, 1.625),
            Member.gap(2.0, 3.5),
            Member.callbackLine("revoke", 4.0, List.of(P3)),
            Member.callbackLine("lost", 4.5, List.of(P0)),
            Member.err(4.75, new KafkaException("boom").toString()),
            Member.mark("leave", 5.0),
            Member.mark("closed", 5.25));
    List<String> expected =
        Files.readAllLines(PY_TESTS.resolve("member_record.jsonl"), StandardCharsets.UTF_8);
    assertEquals(expected.size(), built.size());
    for (int i = 0; i < built.size(); i++) {
      assertEquals(expected.get(i), JSON.writeValueAsString(built.get(i)), "line " + (i + 1));
    }
  }

  /**
   * The fields and JSON types recorder.load_record reads (metrics.py's input): offsets and
   * partitions integral (they key the producer's acknowledged offsets), times floating point.
   */
  private static void assertRecorderShape(JsonNode o) {
    String k = o.get("k").asText();
    switch (k) {
      case "start", "leave", "closed" -> {
        assertEquals(Set.of("k", "t_s"), keys(o), o.toString());
        assertTrue(o.get("t_s").isDouble(), o.toString());
      }
      case "assign", "revoke", "lost" -> {
        assertEquals(Set.of("k", "t_s", "parts"), keys(o), o.toString());
        assertTrue(o.get("t_s").isDouble(), o.toString());
        assertTrue(o.get("parts").isArray(), o.toString());
        for (JsonNode tp : o.get("parts")) {
          assertEquals(2, tp.size(), o.toString());
          assertTrue(tp.get(0).isTextual() && tp.get(1).isInt(), o.toString());
        }
      }
      case "p" -> {
        assertEquals(Set.of("k", "t", "p", "o", "a", "s", "e"), keys(o), o.toString());
        assertTrue(o.get("t").isTextual() && o.get("p").isInt(), o.toString());
        assertTrue(o.get("o").isIntegralNumber(), o.toString());
        for (String f : List.of("a", "s", "e")) {
          assertTrue(o.get(f).isDouble(), f + " in " + o);
        }
      }
      case "gap" -> {
        assertEquals(Set.of("k", "from", "to"), keys(o), o.toString());
        assertTrue(o.get("from").isDouble() && o.get("to").isDouble(), o.toString());
      }
      case "err" -> {
        assertEquals(Set.of("k", "t_s", "msg"), keys(o), o.toString());
        assertTrue(o.get("t_s").isDouble() && o.get("msg").isTextual(), o.toString());
      }
      default -> throw new AssertionError("a kind recorder.py does not know: " + o);
    }
  }

  // ---- the poll loop, on kafka-clients' MockConsumer ----

  @Test
  void pollLoopRecordsCallbacksRecordsGapErrorAndClose() throws IOException {
    MockConsumer<byte[], String> consumer = new MockConsumer<>("earliest");
    StringWriter out = new StringWriter();
    Member m = new Member(clock(), out, 0.002, consumer);
    m.subscribe(List.of("events"));
    consumer.updateBeginningOffsets(Map.of(P0, 0L, P1, 0L));
    consumer.schedulePollTask(() -> consumer.rebalance(List.of(P0, P1)));
    consumer.schedulePollTask(
        () -> {
          consumer.addRecord(new ConsumerRecord<>("events", 0, 0L, null, "0.5"));
          consumer.addRecord(new ConsumerRecord<>("events", 1, 0L, null, "0.75"));
          consumer.addRecord(new ConsumerRecord<>("events", 0, 1L, null, "0.875"));
        });
    // A stall with no record in hand: the next poll comes over GAP_RECORD_S later, a `gap`.
    consumer.schedulePollTask(() -> m.addStall(Member.GAP_RECORD_S + 0.05));
    consumer.schedulePollTask(() -> consumer.rebalance(List.of(P0)));
    consumer.schedulePollTask(() -> consumer.setPollException(new KafkaException("boom")));
    consumer.schedulePollTask(m::requestLeave); // the SIGTERM path: wakeup(), then close()
    m.run();

    assertTrue(consumer.closed(), "close() was called");
    List<JsonNode> got = lines(out);
    got.forEach(MemberTest::assertRecorderShape);
    List<String> kinds = new ArrayList<>();
    got.forEach(o -> kinds.add(o.get("k").asText()));
    // MockConsumer.rebalance calls back as an eager member: revoke what goes, then assign
    // (here nothing new).
    assertEquals(
        List.of("start", "assign", "p", "p", "p", "gap", "revoke", "assign", "err", "leave", "closed"),
        kinds);
    assertEquals("[[\"events\",0],[\"events\",1]]", got.get(1).get("parts").toString());
    assertEquals("[[\"events\",1]]", got.get(6).get("parts").toString());
    assertEquals("[]", got.get(7).get("parts").toString());
    assertTrue(got.get(8).get("msg").asText().contains("boom"));

    Map<String, Double> arrival = new HashMap<>();
    double previousEnd = 0;
    for (JsonNode p : got.subList(2, 5)) {
      arrival.put(p.get("p").asInt() + "/" + p.get("o").asLong(), p.get("a").asDouble());
      double s = p.get("s").asDouble();
      double e = p.get("e").asDouble();
      assertTrue(e - s >= 0.002, "processing held its 2 ms: " + p);
      assertTrue(s >= previousEnd, "one record after the other: " + p);
      previousEnd = e;
    }
    assertEquals(Map.of("0/0", 0.5, "1/0", 0.75, "0/1", 0.875), arrival); // a = the value
    JsonNode gap = got.get(5);
    double gapS = gap.get("to").asDouble() - gap.get("from").asDouble();
    assertTrue(gapS > Member.GAP_RECORD_S && gapS < Member.GAP_RECORD_S + 1.0, gap.toString());
    // Times are non-decreasing (one clock) and leave comes before closed.
    double last = 0;
    for (JsonNode o : got) {
      double t = o.has("t_s") ? o.get("t_s").asDouble() : o.has("s") ? o.get("s").asDouble() : o.get("from").asDouble();
      assertTrue(t >= last, "time order at " + o);
      last = o.has("e") ? o.get("e").asDouble() : o.has("to") ? o.get("to").asDouble() : t;
    }
  }

  @Test
  void lostCallbackIsRecordedWithItsPartitions() throws IOException {
    StringWriter out = new StringWriter();
    Member m = new Member(clock(), out, 0.001, new MockConsumer<>("earliest"));
    m.new Listener().onPartitionsLost(List.of(P1, P3));
    m.new Listener().onPartitionsAssigned(List.of());
    List<JsonNode> got = lines(out);
    got.forEach(MemberTest::assertRecorderShape);
    assertEquals("lost", got.get(0).get("k").asText());
    assertEquals("[[\"events\",1],[\"events\",3]]", got.get(0).get("parts").toString());
    assertEquals("[]", got.get(1).get("parts").toString()); // an empty assignment is recorded too
  }

  // ---- the clock ----

  /** A source of instants moved by hand. */
  private static final class SteppedWall implements InstantSource {
    Instant at;

    SteppedWall(Instant at) {
      this.at = at;
    }

    @Override
    public Instant instant() {
      return at;
    }
  }

  @Test
  void clockReadsTheWallClockAtEveryCallSoAStepMovesItAsItMovesTheProducer() {
    // t0 = 1,800,000,000.25 s; the wall at t0 + 2.5 s, then stepped back 0.2 s (an NTP-style
    // step): now() must read 2.5 then 2.3, as time.time() - t0 does in the Python producer.
    SteppedWall wall = new SteppedWall(Instant.ofEpochSecond(1_800_000_002L, 750_000_000));
    Member.Clock clock = new Member.Clock(1_800_000_000.25, wall);
    assertEquals(2.5, clock.now(), 1e-9);
    wall.at = wall.at.minusMillis(200);
    assertEquals(2.3, clock.now(), 1e-9);
    // A microsecond apart stays a microsecond apart at a 1.8e9 s epoch (whole seconds apart).
    wall.at = wall.at.plusNanos(1_000);
    assertEquals(2.300001, clock.now(), 1e-9);
  }

  // ---- the processing time's busy wait ----

  @Test
  void waitUntilIsNeverEarlyAndPreciseWellUnderAMillisecond() {
    Member.Clock clock = clock();
    int n = 300;
    double[] late = new double[n];
    for (int i = 0; i < n; i++) {
      double target = clock.now() + 1e-4 * (1 + i % 15); // 0.1 .. 1.5 ms ahead
      clock.waitUntil(target);
      late[i] = clock.now() - target;
      assertTrue(late[i] >= 0, "returned " + (-late[i] * 1e6) + " us early");
    }
    // Thread.sleep(1)-style waits would be late by up to a millisecond (median ~0.5 ms); the
    // park-then-spin wait is a few microseconds late unless the host preempts the thread.
    System.out.printf(
        "MemberTest waitUntil: %d waits of 0.1-1.5 ms, lateness median %.1f us, max %.1f us%n",
        n, median(late) * 1e6, Arrays.stream(late).max().getAsDouble() * 1e6);
    assertTrue(median(late) < 50e-6, "median lateness " + median(late) * 1e6 + " us");
  }

  @Test
  void processingTimeIsHeldNotRoundedToMilliseconds() throws IOException {
    StringWriter out = new StringWriter();
    Member m = new Member(clock(), out, 0.0015, new MockConsumer<>("earliest"));
    int n = 60;
    for (int i = 0; i < n; i++) {
      m.process(new ConsumerRecord<>("events", 0, i, null, "0.0"));
    }
    m.addStall(0.02); // a `stall 0.02` control: the next record only takes that much longer
    m.process(new ConsumerRecord<>("events", 0, n, null, "0.0"));
    m.process(new ConsumerRecord<>("events", 0, n + 1, null, "0.0"));
    List<JsonNode> got = lines(out);
    double[] took = new double[n];
    for (int i = 0; i < n; i++) {
      took[i] = got.get(i).get("e").asDouble() - got.get(i).get("s").asDouble();
      assertTrue(took[i] >= 0.0015, "record " + i + " took " + took[i] * 1e3 + " ms");
    }
    double excess = median(took) - 0.0015;
    System.out.printf(
        "MemberTest process: %d records of 1.5 ms, median %.4f ms, max %.4f ms%n",
        n, median(took) * 1e3, Arrays.stream(took).max().getAsDouble() * 1e3);
    assertTrue(excess < 50e-6, "median processing 1.5 ms + " + excess * 1e6 + " us");
    double stalled = got.get(n).get("e").asDouble() - got.get(n).get("s").asDouble();
    double after = got.get(n + 1).get("e").asDouble() - got.get(n + 1).get("s").asDouble();
    assertTrue(stalled >= 0.0215, "stalled record took " + stalled * 1e3 + " ms");
    assertTrue(after < 0.0215, "the stall is taken once, the next took " + after * 1e3 + " ms");
  }

  // ---- the consumer's configuration ----

  @Test
  void configIsPassedAsIsPlusTheDeserializers() throws IOException {
    JsonNode config =
        JSON.readTree(
            "{\"bootstrap.servers\":\"127.0.0.1:9\",\"group.id\":\"g\",\"max.poll.records\":500,"
                + "\"enable.auto.commit\":true,\"fetch.max.wait.ms\":\"20\",\"x.unknown\":\"kept\"}");
    Properties props = Member.consumerProps(config);
    assertEquals(config.size() + 2, props.size());
    for (Iterator<Map.Entry<String, JsonNode>> it = config.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      assertEquals(e.getValue().asText(), props.getProperty(e.getKey()), e.getKey());
    }
    assertEquals("500", props.getProperty("max.poll.records"));
    assertEquals("true", props.getProperty("enable.auto.commit"));
    assertEquals(
        "org.apache.kafka.common.serialization.ByteArrayDeserializer",
        props.getProperty("key.deserializer"));
    assertEquals(
        "org.apache.kafka.common.serialization.StringDeserializer",
        props.getProperty("value.deserializer"));
    assertFalse(props.containsKey("group.protocol"), "nothing added the harness did not pass");
  }

  @Test
  void classicConsumerIsCreatedEarlyKip848AtItsMoment() {
    Properties classic = new Properties();
    classic.put("group.protocol", "classic");
    Properties consumer = new Properties();
    consumer.put("group.protocol", "consumer");
    assertEquals(12.0 - Member.CLASSIC_EARLY_S, Member.createAt(classic, 12.0));
    assertEquals(12.0 - Member.CLASSIC_EARLY_S, Member.createAt(new Properties(), 12.0));
    assertEquals(12.0, Member.createAt(consumer, 12.0));
    assertEquals(1.5, Member.CLASSIC_EARLY_S);
  }

  @Test
  void warmUpHasNoGroupAndLeavesTheMemberConfigAlone() {
    Properties props = new Properties();
    props.put("group.id", "g");
    props.put("group.instance.id", "c1");
    props.put("group.protocol", "consumer");
    props.put("group.remote.assignor", "uniform");
    props.put("enable.auto.commit", "true");
    props.put("client.id", "c1");
    Properties before = new Properties();
    before.putAll(props);
    Properties warm = Member.warmUpProps(props);
    assertEquals(before, props);
    assertFalse(warm.containsKey("group.id") || warm.containsKey("group.instance.id"));
    assertFalse(warm.containsKey("group.remote.assignor"));
    assertEquals("classic", warm.getProperty("group.protocol"));
    assertEquals("false", warm.getProperty("enable.auto.commit"));
    assertEquals("c1-warmup", warm.getProperty("client.id"));
  }

  /**
   * The configurations javamember.member_config gives (classic with the assignor's class and
   * group.instance.id, KIP-848 without the classic-only keys) and their warm-up variants are
   * accepted by the Java consumer: a refused key (e.g. session.timeout.ms with
   * group.protocol=consumer) throws in the constructor, before any connection.
   */
  @Test
  void harnessConfigsAreAcceptedByTheJavaConsumer() throws IOException {
    JsonNode all = JSON.readTree(PY_TESTS.resolve("java_member_configs.json").toFile());
    assertEquals(
        Set.of("eager:range", "eager:range+static", "cooperative:cooperative-sticky", "consumer:uniform"),
        keys(all));
    for (Iterator<Map.Entry<String, JsonNode>> it = all.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      Properties props = Member.consumerProps(e.getValue());
      for (Properties p : List.of(props, Member.warmUpProps(props))) {
        KafkaConsumer<byte[], String> c;
        try {
          c = new KafkaConsumer<>(p);
        } catch (KafkaException ex) {
          throw new AssertionError(e.getKey() + ": the Java consumer refused " + p, ex);
        }
        c.close(CloseOptions.timeout(Duration.ZERO)); // never connected: nothing to wait for
      }
    }
  }
}
