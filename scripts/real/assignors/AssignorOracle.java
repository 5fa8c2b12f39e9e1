// The real KIP-848 server-side assignors of the pinned Apache Kafka (scripts/real/kafka/pom.xml),
// run on `rebalance-sim assign` requests: one request JSON per line on stdin, one answer per
// line on stdout, in the `assign` command's output format. scripts/real/assignor_diff.py
// drives it; run with the broker's classpath: `java -cp CP AssignorOracle.java`.
//
// The group is built as the broker builds it for its assignor: TargetAssignmentBuilder.build
// puts the members into a `new HashMap<>()` (so `GroupSpec.memberIds()` iterates in HashMap
// order of the member ids), and each member's current assignment comes from its target
// assignment record (`Assignment.fromRecord`: a HashMap of topic id to an unmodifiable
// `new HashSet<>(partitions)`), topics put in by name. Topic ids are the request's `topic_ids`.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

public class AssignorOracle {
    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            System.out.println(answer(json.readTree(line)));
            System.out.flush();
        }
    }

    static String answer(JsonNode request) {
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        Map<Uuid, Integer> partitions = new HashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = request.get("topics").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> t = it.next();
            Uuid id = Uuid.fromString(request.get("topic_ids").get(t.getKey()).asText());
            ids.put(t.getKey(), id);
            names.put(id, t.getKey());
            partitions.put(id, t.getValue().asInt());
        }
        Map<String, MemberSubscriptionAndAssignmentImpl> members = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        boolean homogeneous = true;
        Set<Uuid> firstSubscription = null;
        for (JsonNode m : request.get("members")) {
            String memberId = m.get("id").asText();
            Set<Uuid> subscribed = new java.util.LinkedHashSet<>();
            List<String> topicNames = new ArrayList<>();
            for (JsonNode t : m.get("topics")) topicNames.add(t.asText());
            Collections.sort(topicNames);
            for (String name : topicNames) subscribed.add(ids.get(name));
            if (firstSubscription == null) firstSubscription = subscribed;
            homogeneous &= subscribed.equals(firstSubscription);
            // Topics go in by name (the request's order), the order the model assumes for topic
            // ids that share a bucket (their insertion order in the broker is history it does
            // not keep).
            Map<Uuid, List<Integer>> ownedLists = new java.util.LinkedHashMap<>();
            List<String> ownedNames = new ArrayList<>();
            if (m.has("owned")) {
                for (JsonNode tp : m.get("owned")) ownedNames.add(tp.get(0).asText());
                Collections.sort(ownedNames);
                for (String name : ownedNames) ownedLists.putIfAbsent(ids.get(name), new ArrayList<>());
                for (JsonNode tp : m.get("owned")) {
                    Uuid topic = ids.get(tp.get(0).asText());
                    ownedLists.computeIfAbsent(topic, k -> new ArrayList<>()).add(tp.get(1).asInt());
                }
            }
            Map<Uuid, Set<Integer>> owned = new HashMap<>();
            ownedLists.forEach((topic, list) -> {
                Collections.sort(list);
                owned.put(topic, Collections.unmodifiableSet(new HashSet<>(list)));
                for (int p : list) inverted.computeIfAbsent(topic, k -> new HashMap<>()).put(p, memberId);
            });
            Optional<String> instanceId = m.has("group_instance_id")
                ? Optional.of(m.get("group_instance_id").asText()) : Optional.empty();
            members.put(memberId, new MemberSubscriptionAndAssignmentImpl(
                Optional.empty(), instanceId, subscribed, new Assignment(Collections.unmodifiableMap(owned))));
        }
        SubscriptionType type = homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        SubscribedTopicDescriber describer = new SubscribedTopicDescriber() {
            public int numPartitions(Uuid topicId) {
                return partitions.getOrDefault(topicId, -1);
            }
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                return Set.of();
            }
        };
        String name = request.get("assignor").asText();
        ConsumerGroupPartitionAssignor assignor =
            name.equals("uniform") ? new UniformAssignor() : new RangeAssignor();
        GroupAssignment result = assignor.assign(
            new GroupSpecImpl(Collections.unmodifiableMap(members), type, inverted), describer);
        // The `assign` command's format: members by id, [topic, partition] pairs sorted.
        StringBuilder out = new StringBuilder("{");
        List<String> memberIds = new ArrayList<>(members.keySet());
        Collections.sort(memberIds);
        for (int i = 0; i < memberIds.size(); i++) {
            String memberId = memberIds.get(i);
            MemberAssignment a = result.members().get(memberId);
            TreeMap<String, List<Integer>> byName = new TreeMap<>();
            if (a != null) {
                a.partitions().forEach((topic, ps) -> {
                    List<Integer> sorted = new ArrayList<>(ps);
                    Collections.sort(sorted);
                    byName.put(names.get(topic), sorted);
                });
            }
            List<String> pairs = new ArrayList<>();
            byName.forEach((topic, ps) -> ps.forEach(p -> pairs.add("[\"" + topic + "\", " + p + "]")));
            out.append(i == 0 ? "" : ", ").append('"').append(memberId).append("\": [")
                .append(String.join(", ", pairs)).append(']');
        }
        return out.append('}').toString();
    }
}
