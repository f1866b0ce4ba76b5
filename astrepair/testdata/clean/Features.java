package com.example.features;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A feature sampler for the repair tests.
 *
 * <p>It has Javadoc, generics, annotations, records, enums, lambdas,
 * switch expressions and try-with-resources.
 */
@SuppressWarnings({"unchecked", "rawtypes"})
public final class Features<T extends Comparable<T>> implements Runnable {

    /** Result states. */
    public enum State {
        IDLE("idle"),
        RUNNING("running") {
            @Override
            public boolean active() {
                return true;
            }
        },
        DONE("done");

        private final String label;

        State(String label) {
            this.label = label;
        }

        public boolean active() {
            return false;
        }
    }

    /** An immutable pair. */
    public record Pair<A, B>(A first, B second) {
        public Pair {
            if (first == null) {
                throw new IllegalArgumentException("first");
            }
        }
    }

    interface Visitor<R> {
        R visit(String name);

        default R fallback() {
            return null;
        }
    }

    private static final int LIMIT = 16;
    private final Map<String, List<T>> index = new ConcurrentHashMap<>();
    private final int[] weights = {
        1,
        2,
        3,
    };
    private State state = State.IDLE;

    public Features() {
        this(LIMIT);
    }

    public Features(int limit) {
        super();
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be positive: "
                    + limit);
        }
    }

    @Override
    public void run() {
        synchronized (this) {
            state = State.RUNNING;
        }
        for (int i = 0; i < weights.length; i++) {
            if (weights[i] > 2) {
                continue;
            } else if (weights[i] == 2) {
                break;
            } else {
                weights[i]++;
            }
        }
        int code = switch (state) {
            case IDLE -> 0;
            case RUNNING -> {
                int x = weights[0];
                yield x + 1;
            }
            default -> -1;
        };
        switch (code) {
            case 0:
                System.out.println("zero");
                break;
            case 1:
            case 2:
                System.out.println("small");
                // fall through
            default:
                System.out.println("other");
        }
        state = State.DONE;
    }

    public Optional<T> first(String key) {
        List<T> items = index.getOrDefault(key, new ArrayList<>());
        return items.stream()
                .filter(item -> item != null)
                .sorted()
                .findFirst();
    }

    public <R> List<R> map(String key, Function<? super T, ? extends R> fn) {
        List<R> out = new ArrayList<>();
        for (T item : index.get(key)) {
            out.add(fn.apply(item));
        }
        return out;
    }

    static String readAll(Path path) throws IOException {
        StringBuilder sb = new StringBuilder();
        try (BufferedReader reader = Files.newBufferedReader(path)) {
            String line;
            while ((line = reader.readLine()) != null) {
                sb.append(line).append('\n');
            }
        } catch (IOException | RuntimeException e) {
            throw new IOException("read " + path, e);
        } finally {
            sb.trimToSize();
        }
        String text = """
            multi-line
            text block
            """;
        return sb.toString() + text;
    }

    public static void main(String[] args) throws Exception {
        Features<String> f = new Features<>();
        Runnable r = new Runnable() {
            @Override
            public void run() {
                f.run();
            }
        };
        r.run();
        Visitor<Integer> v = name -> name.length();
        do {
            System.out.println(v.visit("x"));
        } while (false);
        label:
        for (String a : args) {
            if (a.isEmpty()) {
                break label;
            }
        }
    }
}
