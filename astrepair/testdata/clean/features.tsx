import React, { useState, useEffect } from "react";
import { fetchItems } from "./api";

interface Props {
  title: string;
  limit?: number;
}

export function List({ title, limit = 10 }: Props) {
  const [items, setItems] = useState<string[]>([]);
  useEffect(() => {
    let cancelled = false;
    fetchItems(limit).then((xs) => {
      if (!cancelled) {
        setItems(xs);
      }
    });
    return () => {
      cancelled = true;
    };
  }, [limit]);

  const rows = items.map((item, i) => (
    <li key={i} className="row">
      {item}
    </li>
  ));

  return (
    <div>
      <h1>{title}</h1>
      <ul>{rows}</ul>
    </div>
  );
}

export default function App() {
  return <List title="Items" />;
}
