package transfer

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

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
