// CreateTopic.java - create a topic with N partitions through Kafka's own
// AdminClient (kafka.sh topic DIR NAME PARTITIONS), run as a single-file
// source program on the broker's jars. Exit 0 when the topic exists.
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

public class CreateTopic {
	public static void main(String[] a) throws Exception {
		Properties p = new Properties();
		p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, a[0]);
		try (Admin admin = Admin.create(p)) {
			admin.createTopics(List.of(new NewTopic(a[1], Integer.parseInt(a[2]), (short) 1)))
				.all().get();
		} catch (ExecutionException e) {
			if (!(e.getCause() instanceof TopicExistsException))
				throw e;
		}
	}
}
