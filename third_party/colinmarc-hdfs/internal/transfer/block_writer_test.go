package transfer

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
)

func TestPacketSize(t *testing.T) {
	bws := &blockWriteStream{}
	bws.buf.Write(make([]byte, outboundPacketSize*3))
	packet := bws.makePacket()

	assert.EqualValues(t, outboundPacketSize, len(packet.data))
}

func TestPacketSizeUndersize(t *testing.T) {
	bws := &blockWriteStream{}
	bws.buf.Write(make([]byte, outboundPacketSize-5))
	packet := bws.makePacket()

	assert.EqualValues(t, outboundPacketSize-5, len(packet.data))
}

func TestPacketSizeAlignment(t *testing.T) {
	bws := &blockWriteStream{}
	bws.buf.Write(make([]byte, outboundPacketSize*3))

	bws.offset = 5
	packet := bws.makePacket()

	assert.EqualValues(t, outboundChunkSize-5, len(packet.data))
}

// fakeDatanode reads packets from conn until the last one in the block,
// acknowledges each of them, and returns their headers.
func fakeDatanode(t *testing.T, conn net.Conn) []*hdfs.PacketHeaderProto {
	var headers []*hdfs.PacketHeaderProto
	for {
		lengths := make([]byte, 6)
		if _, err := io.ReadFull(conn, lengths); err != nil {
			t.Error(err)
			return headers
		}
		packetLen := binary.BigEndian.Uint32(lengths)
		headerLen := binary.BigEndian.Uint16(lengths[4:])
		rest := make([]byte, int(headerLen)+int(packetLen)-4)
		if _, err := io.ReadFull(conn, rest); err != nil {
			t.Error(err)
			return headers
		}
		header := &hdfs.PacketHeaderProto{}
		if err := proto.Unmarshal(rest[:headerLen], header); err != nil {
			t.Error(err)
			return headers
		}
		headers = append(headers, header)
		if header.GetLastPacketInBlock() {
			break
		}
	}
	for _, h := range headers {
		ack, _ := makePrefixedMessage(&hdfs.PipelineAckProto{
			Seqno: proto.Int64(h.GetSeqno()),
			Reply: []hdfs.Status{hdfs.Status_SUCCESS},
		})
		if _, err := conn.Write(ack); err != nil {
			t.Error(err)
		}
	}
	return headers
}

func testFinishSyncBlock(t *testing.T, syncBlock bool) {
	client, server := net.Pipe()
	defer client.Close()
	done := make(chan []*hdfs.PacketHeaderProto)
	go func() { done <- fakeDatanode(t, server) }()

	s := newBlockWriteStream(client, 0)
	_, err := s.Write([]byte("some bytes"))
	require.NoError(t, err)
	require.NoError(t, s.finish(syncBlock))
	headers := <-done

	require.Len(t, headers, 2)
	assert.False(t, headers[0].GetLastPacketInBlock())
	assert.Nil(t, headers[0].SyncBlock, "data packet")
	assert.True(t, headers[1].GetLastPacketInBlock())
	if syncBlock {
		assert.True(t, headers[1].GetSyncBlock(), "last packet")
	} else {
		assert.Nil(t, headers[1].SyncBlock, "last packet")
	}
}

func TestFinishSyncBlock(t *testing.T) {
	testFinishSyncBlock(t, true)
}

func TestFinishNoSyncBlock(t *testing.T) {
	testFinishSyncBlock(t, false)
}

// ackingDatanode reads packets from conn and acknowledges each at once,
// sending their headers to headers, until the last packet in the block.
func ackingDatanode(t *testing.T, conn net.Conn, headers chan<- *hdfs.PacketHeaderProto) {
	defer close(headers)
	for {
		lengths := make([]byte, 6)
		if _, err := io.ReadFull(conn, lengths); err != nil {
			t.Error(err)
			return
		}
		packetLen := binary.BigEndian.Uint32(lengths)
		headerLen := binary.BigEndian.Uint16(lengths[4:])
		rest := make([]byte, int(headerLen)+int(packetLen)-4)
		if _, err := io.ReadFull(conn, rest); err != nil {
			t.Error(err)
			return
		}
		header := &hdfs.PacketHeaderProto{}
		if err := proto.Unmarshal(rest[:headerLen], header); err != nil {
			t.Error(err)
			return
		}
		headers <- header
		ack, _ := makePrefixedMessage(&hdfs.PipelineAckProto{
			Seqno: proto.Int64(header.GetSeqno()),
			Reply: []hdfs.Status{hdfs.Status_SUCCESS},
		})
		if _, err := conn.Write(ack); err != nil {
			t.Error(err)
			return
		}
		if header.GetLastPacketInBlock() {
			return
		}
	}
}

func TestSyncMarksLastPacketAndWaitsForAck(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	headers := make(chan *hdfs.PacketHeaderProto, 100)
	go ackingDatanode(t, server, headers)

	s := newBlockWriteStream(client, 0)
	data := make([]byte, outboundPacketSize+100)
	_, err := s.Write(data)
	require.NoError(t, err)
	require.NoError(t, s.sync(true))
	// The sync returned, so its packet was acknowledged: every header
	// up to it is in the channel.
	h1, h2 := <-headers, <-headers
	assert.Nil(t, h1.SyncBlock, "full packet before the sync")
	assert.EqualValues(t, outboundPacketSize, h1.GetDataLen())
	assert.True(t, h2.GetSyncBlock(), "last packet of the sync")
	assert.EqualValues(t, 100, h2.GetDataLen())
	assert.False(t, h2.GetLastPacketInBlock())

	// Nothing buffered: an empty packet carries the sync.
	require.NoError(t, s.sync(true))
	h3 := <-headers
	assert.True(t, h3.GetSyncBlock(), "empty sync packet")
	assert.EqualValues(t, 0, h3.GetDataLen())
	assert.EqualValues(t, outboundPacketSize+100, h3.GetOffsetInBlock())

	// Without syncBlock (hflush) no packet asks for the sync.
	require.NoError(t, s.sync(false))
	h := <-headers
	assert.Nil(t, h.SyncBlock, "hflush packet")

	// More bytes after a sync start where it ended.
	_, err = s.Write([]byte("tail"))
	require.NoError(t, err)
	require.NoError(t, s.finish(false))
	h4 := <-headers
	assert.EqualValues(t, outboundPacketSize+100, h4.GetOffsetInBlock())
	assert.Nil(t, h4.SyncBlock)
	for range headers {
	}
}

func TestSyncReportsAckError(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		lengths := make([]byte, 6)
		if _, err := io.ReadFull(server, lengths); err != nil {
			return
		}
		server.Close() // the datanode goes away before it acknowledges
	}()

	s := newBlockWriteStream(client, 0)
	_, err := s.Write([]byte("some bytes"))
	require.NoError(t, err)
	assert.Error(t, s.sync(true))
}

// readPacketHeader reads one packet from conn and returns its header.
func readPacketHeader(conn net.Conn) (*hdfs.PacketHeaderProto, error) {
	lengths := make([]byte, 6)
	if _, err := io.ReadFull(conn, lengths); err != nil {
		return nil, err
	}
	packetLen := binary.BigEndian.Uint32(lengths)
	headerLen := binary.BigEndian.Uint16(lengths[4:])
	rest := make([]byte, int(headerLen)+int(packetLen)-4)
	if _, err := io.ReadFull(conn, rest); err != nil {
		return nil, err
	}
	header := &hdfs.PacketHeaderProto{}
	return header, proto.Unmarshal(rest[:headerLen], header)
}

func writeAck(conn net.Conn, seqno int64, status hdfs.Status) error {
	ack, _ := makePrefixedMessage(&hdfs.PipelineAckProto{
		Seqno: proto.Int64(seqno),
		Reply: []hdfs.Status{status},
	})
	_, err := conn.Write(ack)
	return err
}

// Several syncs are in flight at once: the datanode sees three sync
// packets before it acknowledges any, and each wait returns once its own
// packet is acknowledged.
func TestStartSyncOverlaps(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	var seqnos []int64
	syncsBeforeAck := make(chan int, 1)
	go func() {
		defer server.Close()
		// Read without acknowledging until three syncs arrived, or a
		// while passed without (the client waits for an ack first).
		server.SetReadDeadline(time.Now().Add(2 * time.Second))
		for len(seqnos) < 3 {
			h, err := readPacketHeader(server)
			if err != nil {
				break
			}
			if h.GetSyncBlock() {
				seqnos = append(seqnos, h.GetSeqno())
			}
		}
		syncsBeforeAck <- len(seqnos)
		server.SetReadDeadline(time.Time{})
		for _, n := range seqnos {
			if err := writeAck(server, n, hdfs.Status_SUCCESS); err != nil {
				return
			}
		}
		// Then acknowledge every packet as it comes.
		for {
			h, err := readPacketHeader(server)
			if err != nil {
				return
			}
			seqnos = append(seqnos, h.GetSeqno())
			if err := writeAck(server, h.GetSeqno(), hdfs.Status_SUCCESS); err != nil {
				return
			}
		}
	}()

	s := newBlockWriteStream(client, 0)
	var waits []func() error
	for i := 0; i < 3; i++ {
		_, err := s.Write([]byte(fmt.Sprintf("batch %d;", i)))
		require.NoError(t, err)
		wait, err := s.startSync(true)
		require.NoError(t, err)
		waits = append(waits, wait)
	}
	assert.Equal(t, 3, <-syncsBeforeAck, "sync packets the datanode saw before its first ack")
	for i, wait := range waits {
		assert.NoError(t, wait(), "wait %d", i)
	}
	s.ackMu.Lock()
	acked := s.acked
	s.ackMu.Unlock()
	assert.EqualValues(t, 3, acked, "seqno of the last sync acknowledged")
}

// When the pipeline fails after acknowledging the first of three syncs in
// flight, the first wait succeeds and the later ones fail.
func TestStartSyncFailureFailsLaterSyncs(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		var seqnos []int64
		for len(seqnos) < 3 {
			h, err := readPacketHeader(server)
			if err != nil {
				server.Close()
				return
			}
			if h.GetSyncBlock() {
				seqnos = append(seqnos, h.GetSeqno())
			}
		}
		_ = writeAck(server, seqnos[0], hdfs.Status_SUCCESS)
		_ = writeAck(server, seqnos[1], hdfs.Status_ERROR)
		server.Close()
	}()

	s := newBlockWriteStream(client, 0)
	var waits []func() error
	for i := 0; i < 3; i++ {
		_, err := s.Write([]byte(fmt.Sprintf("batch %d;", i)))
		require.NoError(t, err)
		wait, err := s.startSync(true)
		require.NoError(t, err)
		waits = append(waits, wait)
	}
	assert.NoError(t, waits[0]())
	assert.Error(t, waits[1]())
	assert.Error(t, waits[2]())
}
