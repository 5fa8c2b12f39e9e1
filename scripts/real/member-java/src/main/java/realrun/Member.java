// One group member with the Apache Kafka Java consumer, as its own OS process:
//   java -cp CP realrun.Member ARGS_JSON
// The Java twin of scripts/real/realrun/member.py: same arguments (name, record, t0, start_at_s,
// processing_s, batch, config, topics), same JSON-lines record (recorder.py: start, assign,
// revoke, lost, p, gap, leave, closed, err), same controls (SIGTERM = close(): commit + leave;
// a line `stall SECONDS` on stdin = the current batch takes that much longer; SIGKILL and
// SIGSTOP/SIGCONT need no cooperation). The consumer subscribes at start_at_s (the JVM starts
// earlier and waits; a classic consumer is created 1.5 s before, a KIP-848 one at the moment). Processing a record takes processing_s, held to a few microseconds by
// parking until ~0.2 ms before the end and spinning the rest (Thread.sleep has 1 ms steps).
// Commits are the client's own: with enable.auto.commit it commits in poll() every
// auto.commit.interval.ms, before an eager revocation and in close() (ConsumerCoordinator).
package realrun;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

public final class Member {
  static final double GAP_RECORD_S = 1.0; // poll gaps longer than this are recorded
  static final Duration POLL_TIMEOUT = Duration.ofMillis(50);
  static final long SPIN_NS = 200_000; // the last 0.2 ms of a wait is spun, not parked
  static final double CLASSIC_EARLY_S = 1.5; // a classic consumer is created this long before its moment

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Clock clock;
  private final Writer out;
  private final double processingS;
  private final Consumer<byte[], String> consumer;
  private volatile boolean leaveRequested;
  private double stallS; // guarded by this

  /**
   * Seconds since t0 on the wall clock, read afresh at every call (Instant.now(): nanosecond
   * precision on Linux since JDK 15), as the Python producer and members read it (time.time()).
   * Every process of a run stamps its record on this one clock (recorder.py); a clock that read
   * the wall clock once and then counted System.nanoTime() would keep a step of the wall clock
   * made after its start out of this member's times only, and put its records off the
   * producer's by the step (the likely cause of a CI run on 2026-12-07 whose Java member
   * processed, by its clock, records the producer's clock says were produced after the end).
   */
  static final class Clock {
    private final InstantSource wall;
    private final long t0WholeS;
    private final double t0FractionS;

    Clock(double t0) {
      this(t0, InstantSource.system());
    }

    /** A clock on any source of instants (tests step one by hand). */
    Clock(double t0, InstantSource wall) {
      this.wall = wall;
      this.t0WholeS = (long) Math.floor(t0);
      this.t0FractionS = t0 - t0WholeS;
    }

    /** Whole seconds and the fraction apart, so a 1.8e9 s epoch keeps sub-microsecond steps. */
    double now() {
      Instant now = wall.instant();
      return (now.getEpochSecond() - t0WholeS) + (now.getNano() / 1e9 - t0FractionS);
    }

    /** Wait until now() >= t: park while far, spin the last SPIN_NS. */
    void waitUntil(double t) {
      while (true) {
        long left = (long) ((t - now()) * 1e9);
        if (left <= 0) {
          return;
        }
        if (left > SPIN_NS) {
          LockSupport.parkNanos(left - SPIN_NS);
        } else {
          Thread.onSpinWait();
        }
      }
    }
  }

  /** A member around a consumer, writing to `out` (tests pass a MockConsumer and a buffer). */
  Member(Clock clock, Writer out, double processingS, Consumer<byte[], String> consumer) {
    this.clock = clock;
    this.out = out;
    this.processingS = processingS;
    this.consumer = consumer;
  }

  /**
   * The member of the harness's ARGS_JSON: warm-up, its consumer created at createAt(), subscribed
   * at start_at_s (a `start` line).
   */
  static Member start(JsonNode args) throws IOException {
    Clock clock = new Clock(args.get("t0").asDouble());
    Writer out =
        new OutputStreamWriter(
            new FileOutputStream(args.get("record").asText(), true), StandardCharsets.UTF_8);
    double processingS = args.get("processing_s").asDouble();
    Properties props = consumerProps(args.get("config"));
    warmUp(props, args.get("topics").get(0).asText());
    double startAt = args.get("start_at_s").asDouble();
    clock.waitUntil(createAt(props, startAt));
    Member member = new Member(clock, out, processingS, new KafkaConsumer<>(props));
    clock.waitUntil(startAt);
    List<String> topics = new ArrayList<>();
    args.get("topics").forEach(t -> topics.add(t.asText()));
    member.subscribe(topics);
    return member;
  }

  /** The consumer's properties: the harness's `config` object as is (values as text), plus the
   * deserializers (keys: bytes; values: the producer's produce() time as text). */
  static Properties consumerProps(JsonNode config) {
    Properties props = new Properties();
    config.fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
    props.put("key.deserializer", ByteArrayDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    return props;
  }

  /** When the member's consumer is created, for a subscribe at startAt. */
  static double createAt(Properties props, double startAt) {
    if (!"consumer".equals(props.getProperty("group.protocol"))) {
      // Classic: created CLASSIC_EARLY_S before the moment (its construction took ~0.5 s on the
      // loaded host even after the warm-up). Faithful: the classic auto-commit timer restarts
      // when a join completes (ConsumerCoordinator.onJoinComplete: "Reschedule the auto commit
      // starting from now", nextAutoCommitTimer.updateAndReset), so its creation time cannot
      // shift a commit; nothing is assigned before the first join.
      return startAt - CLASSIC_EARLY_S;
    }
    // KIP-848: created at the moment, its auto-commit timer runs from its creation.
    return startAt;
  }

  /** Subscribe with the recording listener and write the `start` line. */
  void subscribe(List<String> topics) {
    consumer.subscribe(topics, new Listener());
    write(mark("start", clock.now()));
  }

  /**
   * Load the client's classes before the moment: a throwaway consumer without a group (no
   * coordinator) is created, asks the broker for the topic's partitions (a metadata request:
   * connection, ApiVersions, Metadata) and is closed. A cold JVM on a loaded host took ~1.8 s to
   * construct the first consumer and 4 s more to its first metadata answer, which shifted every
   * subscribe and join.
   * The member's own consumer is still created at its moment (its auto-commit timer starts
   * then, ConsumerCoordinator's constructor), as member.py does.
   */
  static void warmUp(Properties props, String topic) {
    try (KafkaConsumer<byte[], String> c = new KafkaConsumer<>(warmUpProps(props))) {
      c.partitionsFor(topic, Duration.ofSeconds(10));
    }
    try {
      JSON.writeValueAsString(JSON.createObjectNode().put("k", "warm").put("t_s", 0.0));
    } catch (IOException e) {
      throw new KafkaException(e);
    }
  }

  /** The warm-up consumer's properties: the member's without a group, classic, no commits. */
  static Properties warmUpProps(Properties props) {
    Properties warm = new Properties();
    warm.putAll(props);
    warm.remove("group.id");
    warm.remove("group.instance.id");
    warm.put("group.protocol", "classic");
    warm.remove("group.remote.assignor");
    warm.put("enable.auto.commit", "false");
    warm.put("client.id", props.getProperty("client.id", "member") + "-warmup");
    return warm;
  }

  // The record's lines (recorder.py's kinds, read by recorder.load_record for metrics.py).

  /** `start`, `leave`, `closed`: {"k","t_s"}. */
  static ObjectNode mark(String kind, double t) {
    return JSON.createObjectNode().put("k", kind).put("t_s", t);
  }

  /** `assign`, `revoke`, `lost`: {"k","t_s","parts":[[topic, partition], ...]}. */
  static ObjectNode callbackLine(String kind, double t, Collection<TopicPartition> parts) {
    ObjectNode o = mark(kind, t);
    ArrayNode list = o.putArray("parts");
    for (TopicPartition tp : parts) {
      list.addArray().add(tp.topic()).add(tp.partition());
    }
    return o;
  }

  /** `p`: one processed record, {"k","t","p","o","a","s","e"}; `a` = the value (produce() time). */
  static ObjectNode processed(ConsumerRecord<byte[], String> r, double start, double end) {
    return JSON.createObjectNode()
        .put("k", "p")
        .put("t", r.topic())
        .put("p", r.partition())
        .put("o", r.offset())
        .put("a", Double.parseDouble(r.value()))
        .put("s", start)
        .put("e", end);
  }

  /** `gap`: a poll gap over GAP_RECORD_S, {"k","from","to"}. */
  static ObjectNode gap(double from, double to) {
    return JSON.createObjectNode().put("k", "gap").put("from", from).put("to", to);
  }

  /** `err`: {"k","t_s","msg"}. */
  static ObjectNode err(double t, String msg) {
    return mark("err", t).put("msg", msg);
  }

  /** The rebalance callbacks, recorded as member.py's on_assign / on_revoke / on_lost. */
  final class Listener implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> parts) {
      callback("assign", parts);
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> parts) {
      callback("revoke", parts);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> parts) {
      callback("lost", parts);
    }
  }

  void callback(String kind, Collection<TopicPartition> parts) {
    write(callbackLine(kind, clock.now(), parts));
  }

  /** One JSON line, flushed at once (a SIGKILLed member loses at most the line being written). */
  synchronized void write(ObjectNode o) {
    try {
      out.write(JSON.writeValueAsString(o));
      out.write('\n');
      out.flush();
    } catch (IOException e) {
      throw new KafkaException("cannot write the record", e);
    }
  }

  synchronized void addStall(double s) {
    stallS += s;
  }

  synchronized double takeStall() {
    double s = stallS;
    stallS = 0;
    return s;
  }

  /** Stdin reader: `stall SECONDS` lines. */
  void readControls() {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] words = line.trim().split("\\s+");
        if (words.length == 2 && words[0].equals("stall")) {
          addStall(Double.parseDouble(words[1]));
        }
      }
    } catch (IOException | NumberFormatException e) {
      // no more controls
    }
  }

  /** Process one record: the processing time plus a pending stall, then record it. */
  void process(ConsumerRecord<byte[], String> r) {
    double start = clock.now();
    clock.waitUntil(start + processingS + takeStall());
    write(processed(r, start, clock.now()));
  }

  /** Ask the poll loop to end (the shutdown hook's SIGTERM path): it leaves at once. */
  void requestLeave() {
    leaveRequested = true;
    consumer.wakeup();
  }

  /** The poll loop until SIGTERM (leaveRequested + wakeup()); then close() (commit + leave). */
  void run() {
    double lastReturn = clock.now();
    while (!leaveRequested) {
      double stall = takeStall();
      if (stall > 0) {
        clock.waitUntil(clock.now() + stall); // a stall with no record in hand
      }
      double called = clock.now();
      if (called - lastReturn > GAP_RECORD_S) {
        write(gap(lastReturn, called));
      }
      ConsumerRecords<byte[], String> records;
      try {
        records = consumer.poll(POLL_TIMEOUT);
      } catch (WakeupException e) {
        break;
      } catch (KafkaException e) {
        write(err(clock.now(), e.toString()));
        lastReturn = clock.now();
        continue;
      }
      lastReturn = clock.now();
      for (ConsumerRecord<byte[], String> r : records) {
        process(r);
      }
    }
    write(mark("leave", clock.now()));
    try {
      consumer.close();
    } catch (KafkaException e) {
      write(err(clock.now(), e.toString()));
    }
    write(mark("closed", clock.now()));
  }

  public static void main(String[] argv) throws Exception {
    Member member = Member.start(JSON.readTree(argv[0]));
    Thread main = Thread.currentThread();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  member.requestLeave();
                  try {
                    main.join(30_000);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }));
    Thread controls = new Thread(member::readControls, "controls");
    controls.setDaemon(true);
    controls.start();
    member.run();
    member.out.close();
  }
}
