// CreateTopic.java - create topics with N partitions each through Kafka's
// own AdminClient (kafka.sh topic DIR N NAME...), run as a single-file
// source program on the broker's jars. Exit 0 when the topics exist.
import java.util.ArrayList;
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
		List<NewTopic> topics = new ArrayList<>();
		for (int i = 2; i < a.length; i++)
			topics.add(new NewTopic(a[i], Integer.parseInt(a[1]), (short) 1));
		try (Admin admin = Admin.create(p)) {
			for (var f : admin.createTopics(topics).values().values()) {
				try {
					f.get();
				} catch (ExecutionException e) {
					if (!(e.getCause() instanceof TopicExistsException))
						throw e;
				}
			}
		}
	}
}
