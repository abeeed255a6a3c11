// One OpenSearch node in this JVM, with the HTTP transport and the k-NN plugin loaded from the
// classpath (provision.sh puts the Maven Central jars there). It replaces the distribution's
// bootstrap, which needs the tarball's layout (modules with their security policies, a config
// directory, a non-root user); the node, its settings and its plugins are the same classes.
//
// Arguments: <home> <data dir> <http port> <transport port>. Stops cleanly on SIGTERM.
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.opensearch.common.logging.LogConfigurator;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.knn.plugin.KNNPlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

public final class OpenSearchNode {
  /** Node's constructor with classpath plugins is protected: this subclass only opens it. */
  private static final class ClasspathNode extends Node {
    ClasspathNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
      super(env, plugins, true);
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: OpenSearchNode <home> <data dir> <http port> <transport port>");
      System.exit(2);
    }
    Path home = Path.of(args[0]);
    Path dataDir = Path.of(args[1]);
    Files.createDirectories(dataDir.resolve("data"));
    Files.createDirectories(dataDir.resolve("logs"));
    Settings settings = Settings.builder()
        .put("path.home", home.toString())
        .put("path.data", dataDir.resolve("data").toString())
        .put("path.logs", dataDir.resolve("logs").toString())
        .put("cluster.name", "vecbench")
        .put("node.name", "vecbench")
        .put("discovery.type", "single-node")
        .put("network.host", "127.0.0.1")
        .put("http.port", args[2])
        .put("transport.port", args[3])
        // A benchmark machine's disk may be fuller than the default watermarks allow, which would
        // leave the index unassigned (red) instead of failing loudly.
        .put("cluster.routing.allocation.disk.threshold_enabled", false)
        .put("action.auto_create_index", false)
        // Classpath plugins report no version of their own: the plugin jar's, as a node attribute.
        .put("node.attr.knn_plugin_version", String.valueOf(KNNPlugin.class.getPackage().getImplementationVersion()))
        .build();
    // The console is the server's log file (the runner redirects it): no log4j2.properties.
    LogConfigurator.registerErrorListener();
    LogConfigurator.configureWithoutConfig(settings);
    Environment env = InternalSettingsPreparer.prepareEnvironment(settings, java.util.Map.of(), home.resolve("config"), () -> "vecbench");
    List<Class<? extends Plugin>> plugins = List.of(Netty4Plugin.class, KNNPlugin.class);
    Node node = new ClasspathNode(env, plugins);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        node.close();
        node.awaitClose(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        e.printStackTrace();
      } finally {
        stopped.countDown();
      }
    }, "vecbench-stop"));
    node.start();
    System.out.println("vecbench: node started on 127.0.0.1:" + args[2]);
    // The node's threads are daemons: this one keeps the JVM alive until the shutdown hook ran.
    stopped.await();
  }
}
